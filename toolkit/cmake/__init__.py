"""The CMake stages: configure, build and check a tree, and collect its libraries."""
