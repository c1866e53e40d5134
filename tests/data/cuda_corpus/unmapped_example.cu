// Names with no HIP counterpart: hipify must list each with file:line (and --strict must fail).
#include <cuda_runtime.h>
#include <cooperative_groups/reduce.h>

cudaError_t Capture(cudaGraph_t graph, cudaGraphExec_t* exec) {
  cudaGraphInstantiateParams params = {};
  return cudaGraphInstantiateWithParams(exec, graph, &params);
}

int Version() { return CUDART_VERSION; }
