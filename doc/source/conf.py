project = 'nova_lite'
master_doc = 'index'
html_theme = 'alabaster'
exclude_patterns = []
