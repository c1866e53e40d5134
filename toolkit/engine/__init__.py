"""The build engine: options, the work tree, settling a build, the stage runner and the pipeline that orders
the stages."""
