"""Following upstream: moving a recipe to a new revision of its tree (`bump`), surveying what a revision
needs (`survey`), and checking the system APIs a tree calls before it compiles (the api-check stage).

Modules: resolve.py (a revision to a commit), patches.py (the series judged on the new revision), surface.py
(options and installed libraries against the recipe), dep_changes.py (FetchContent requests against the recipe,
pinning new versions), survey.py (a configure with the dependency provider in survey mode), apis.py +
cxxscan.py + compiledb.py (the API check; data/system_apis.toml), stage.py + settings.py (the api-check stage
and [api_check]), staging.py + edit.py + commit.py (the new recipe on a scratch copy, written all or nothing),
report.py (Markdown), bump.py (the command), cli.py (`bump`, `survey`).
"""
