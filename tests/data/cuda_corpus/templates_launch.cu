// Templates, dynamic shared memory and every launch-configuration form.
#include <cuda_runtime.h>
#include <cstdint>
#include "common.cuh"

namespace corpus {

template <typename T, int kVec>
__global__ void ScaleVec(const T* __restrict__ in, T* __restrict__ out, T factor, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * kVec;
#pragma unroll
  for (int v = 0; v < kVec; ++v) {
    if (base + v < n) out[base + v] = in[base + v] * factor;
  }
}

template <typename T>
__global__ void BlockSum(const T* in, T* out, int n) {
  extern __shared__ unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  int tid = threadIdx.x;
  T acc = T(0);
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) acc += in[i];
  smem[tid] = acc;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) smem[tid] += smem[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, smem[0]);
}

template <typename T, int kVec>
cudaError_t LaunchScale(const T* in, T* out, T factor, int n, cudaStream_t stream) {
  dim3 grid(CeilDiv(n, kThreadsPerBlock * kVec));
  dim3 block(kThreadsPerBlock);
  ScaleVec<T, kVec><<<grid, block, 0, stream>>>(in, out, factor, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSum(const T* in, T* out, int n, cudaStream_t stream) {
  const int blocks = 64;
  BlockSum<T><<<blocks, kThreadsPerBlock, kThreadsPerBlock * sizeof(T), stream>>>(in, out, n);
  BlockSum<T><<<dim3(blocks, 1, 1), dim3(kThreadsPerBlock)>>>(in, out, n);
  return cudaGetLastError();
}

template cudaError_t LaunchScale<float, 4>(const float*, float*, float, int, cudaStream_t);
template cudaError_t LaunchScale<int32_t, 2>(const int32_t*, int32_t*, int32_t, int, cudaStream_t);
template cudaError_t LaunchSum<float>(const float*, float*, int, cudaStream_t);

}  // namespace corpus
