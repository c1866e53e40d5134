"""The command line: `python -m toolkit COMMAND`, one module per command family (main.py dispatches)."""
