project = 'nova_lite Release Notes'
extensions = ['reno.sphinxext']
master_doc = 'index'
html_theme = 'alabaster'
