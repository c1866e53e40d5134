// CUB block reduction and device radix sort; Thrust on a CUDA stream.
#include <hipcub/hipcub.hpp>
#include <hipcub/block/block_reduce.hpp>
#include <thrust/device_ptr.h>
#include <thrust/sort.h>
#include <thrust/system/hip/execution_policy.h>
#include <hip/hip_runtime.h>

template <int kBlock>
__global__ void BlockMax(const float* in, float* out, int n) {
  using BlockReduce = hipcub::BlockReduce<float, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  int i = blockIdx.x * kBlock + threadIdx.x;
  float v = i < n ? in[i] : -1e30f;
  float m = BlockReduce(storage).Reduce(v, hipcub::Max());
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

hipError_t SortKeys(const int* keys_in, int* keys_out, int n, hipStream_t stream) {
  size_t temp_bytes = 0;
  hipcub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys_in, keys_out, n, 0, 32, stream);
  void* temp = nullptr;
  hipError_t e = hipMallocAsync(&temp, temp_bytes, stream);
  if (e != hipSuccess) return e;
  hipcub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, n, 0, 32, stream);
  return hipFreeAsync(temp, stream);
}

void ThrustSort(int* data, int n, hipStream_t stream) {
  thrust::device_ptr<int> p(data);
  thrust::sort(thrust::hip::par.on(stream), p, p + n);
  BlockMax<256><<<1, 256, 0, stream>>>(nullptr, nullptr, 0);
}
