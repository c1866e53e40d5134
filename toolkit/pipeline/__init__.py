"""The build pipeline: its options, the work tree, settling a build, the stage runner, the stages in their order
and their adapters, the engine comparison, and `clean` (removing work trees). The commands' parsers (build,
patch, list, clean, ...) are toolkit/cli/'s."""
