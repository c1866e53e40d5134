"""The stage adapters: each reads a settled build (toolkit/pipeline/build.py) and calls its area's functions,
as one Stage the runner runs, or as a function for what a command does with a settled build besides its stages
(the smoke after a build, a series' check and refresh). The area packages know nothing of the build or the
runner."""
