"""The build pipeline: its options, the work tree, settling a build, the stage runner and the stages in their
order, and the commands that run them (build, list, clean)."""
