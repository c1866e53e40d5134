"""Following upstream: moving a recipe to a new revision of its tree (`bump`), surveying what a revision
needs (`survey`), and checking the system APIs a tree calls before it compiles (the api-check stage).

Modules: resolve.py (a revision to a commit), survey.py (configure with the dependency provider in survey
mode), surface.py (options, dependencies, libraries against the recipe), apis.py + cxxscan.py + compiledb.py
(the API check), patches.py (the series on the new revision), stage.py (the api-check stage), edit.py and
commit.py (the new recipe, written all or nothing), report.py (Markdown), bump.py (the command), cli.py.
"""
