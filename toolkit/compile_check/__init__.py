"""Compile check: every translation unit of a hipified tree compiled with the build root's hipcc."""
