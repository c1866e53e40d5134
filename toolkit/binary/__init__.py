"""Facts about built binaries and the tools that make them: ELF, offload bundles, the HIP toolchain, patchelf."""
