"""Following upstream: moving a recipe to a new revision of its tree (`bump`) and surveying what a revision
needs (`survey`).

Modules: resolve.py (a revision to a commit), patches.py (the series judged on the new revision), surface.py
(options and installed libraries against the recipe), exports.py (what a revision's libraries export, as its link
declares it), dep_changes.py (FetchContent requests against the recipe, pinning new versions), survey.py (a
configure with the dependency provider in survey mode), staging.py + edit.py + commit.py (the new recipe on a
scratch copy, written all or nothing), report.py (Markdown), bump.py (the command). The API check lives in
toolkit/apicheck/, the commands in toolkit/cli/upstream.py.
"""
