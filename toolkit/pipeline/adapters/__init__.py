"""The stage adapters: each reads a settled build (toolkit/pipeline/build.py) and calls its area's functions,
as one Stage the runner runs. The area packages know nothing of the build or the runner."""
