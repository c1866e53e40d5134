"""Utilities every part of the toolkit uses: errors, logging, files, TOML, locks, running tools."""
