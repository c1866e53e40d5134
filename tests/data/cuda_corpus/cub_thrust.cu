// CUB block reduction and device radix sort; Thrust on a CUDA stream.
#include <cub/cub.cuh>
#include <cub/block/block_reduce.cuh>
#include <thrust/device_ptr.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/execution_policy.h>
#include <cuda_runtime.h>

template <int kBlock>
__global__ void BlockMax(const float* in, float* out, int n) {
  using BlockReduce = cub::BlockReduce<float, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  int i = blockIdx.x * kBlock + threadIdx.x;
  float v = i < n ? in[i] : -1e30f;
  float m = BlockReduce(storage).Reduce(v, cub::Max());
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

cudaError_t SortKeys(const int* keys_in, int* keys_out, int n, cudaStream_t stream) {
  size_t temp_bytes = 0;
  cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys_in, keys_out, n, 0, 32, stream);
  void* temp = nullptr;
  cudaError_t e = cudaMallocAsync(&temp, temp_bytes, stream);
  if (e != cudaSuccess) return e;
  cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, n, 0, 32, stream);
  return cudaFreeAsync(temp, stream);
}

void ThrustSort(int* data, int n, cudaStream_t stream) {
  thrust::device_ptr<int> p(data);
  thrust::sort(thrust::cuda::par.on(stream), p, p + n);
  BlockMax<256><<<1, 256, 0, stream>>>(nullptr, nullptr, 0);
}
