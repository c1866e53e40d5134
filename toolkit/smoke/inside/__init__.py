"""Scripts copied into the smoke venv and run there by path: the standard library and the packages under test only,
no toolkit import."""
