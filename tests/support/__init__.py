"""Helpers shared by the tests of every area; no test file imports another test file."""
