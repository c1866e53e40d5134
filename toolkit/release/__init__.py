"""Release builds: the matrix, containers, supply-chain records (SBOM, provenance, SHA256SUMS) and the
shared compile cache. Modules are imported where used so the matrix and container code stay
standard-library only."""
