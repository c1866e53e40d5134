// Block reduction built on warp shuffles, ballots and cooperative groups.
// The runtime header comes first: HIP 5.2's cooperative-groups header is not self-contained.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include "warp_reduce.cuh"

namespace cg = cooperative_groups;

__global__ void RowSum(const float* in, float* out, int cols) {
  __shared__ float partial[32];
  cg::thread_block block = cg::this_thread_block();
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += in[blockIdx.x * cols + c];
  acc = WarpReduceSum(acc);
  if (lane == 0) partial[warp] = acc;
  block.sync();
  if (warp == 0) {
    acc = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
    acc = WarpReduceSum(acc);
    if (lane == 0) out[blockIdx.x] = acc;
  }
}

__global__ void CountPositive(const float* in, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned active = __activemask();
  bool positive = i < n && in[i] > 0.0f;
  auto votes = __ballot_sync(active, positive);
  __syncwarp();
  if ((threadIdx.x & 31) == 0) atomicAdd(count, __popcll(votes));
  if (__any_sync(0xffffffff, positive) && !__all_sync(0xffffffff, positive)) {
    float v = __shfl_sync(0xffffffff, i < n ? in[i] : 0.0f, 0, 32);
    (void)v;
  }
}

cudaError_t LaunchRowSum(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  RowSum<<<rows, 256, 0, stream>>>(in, out, cols);
  return cudaGetLastError();
}
