"""Running a toolkit command in a container: the engine (podman or docker), the host folders it may mount, and a
build root's folder run as the container's filesystem."""
