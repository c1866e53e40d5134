"""Hostile recipes, URLs, dist folders and container options: secrets stay secret, the host stays untouched."""
