// MIGraphX dynamic batch: pad a batch up to the next power of two, slice outputs back.
#include <cuda_runtime.h>
#include <cstdint>

namespace {

__host__ __device__ inline int64_t NextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

template <typename T>
__global__ void PadBatchKernel(const T* src, T* dst, int64_t batch, int64_t padded_batch, int64_t row_elems) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t total = padded_batch * row_elems;
  for (; i < total; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t row = i / row_elems;
    dst[i] = row < batch ? src[i] : T(0);
  }
}

template <typename T>
__global__ void SliceBatchKernel(const T* src, T* dst, int64_t batch, int64_t row_elems) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < batch * row_elems) dst[i] = src[i];
}

}  // namespace

extern "C" cudaError_t PadBatchToPowerOfTwo(const float* src, float* dst, int64_t batch, int64_t row_elems,
                                            cudaStream_t stream) {
  const int64_t padded = NextPowerOfTwo(batch);
  const int threads = 256;
  const int blocks = static_cast<int>((padded * row_elems + threads - 1) / threads);
  PadBatchKernel<float><<<blocks, threads, 0, stream>>>(src, dst, batch, padded, row_elems);
  return cudaGetLastError();
}

extern "C" cudaError_t SliceBatch(const float* src, float* dst, int64_t batch, int64_t row_elems,
                                  cudaStream_t stream) {
  const int threads = 256;
  const int blocks = static_cast<int>((batch * row_elems + threads - 1) / threads);
  SliceBatchKernel<float><<<blocks, threads, 0, stream>>>(src, dst, batch, row_elems);
  return cudaGetLastError();
}
