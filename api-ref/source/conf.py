project = 'nova_lite API Reference'
extensions = ['os_api_ref', 'openstackdocstheme']
master_doc = 'index'
html_theme = 'openstackdocs'
openstackdocs_repo_name = 'nova_lite'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
