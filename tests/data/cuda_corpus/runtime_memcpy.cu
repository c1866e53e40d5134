// Host code on the runtime API: memory, streams, events, device queries, error strings.
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include "common.cuh"

__global__ void AddOne(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

cudaError_t RoundTrip(const float* host_in, float* host_out, int n, int device) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  cudaDeviceProp prop;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  int sm_count = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));

  cudaStream_t stream;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&stop, cudaEventDefault));

  float* device_buf = nullptr;
  size_t bytes = sizeof(float) * n;
  CUDA_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void**>(&device_buf), bytes));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_buf, 0, bytes, stream));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(start, stream));
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_buf, host_in, bytes, cudaMemcpyHostToDevice, stream));
  AddOne<<<CeilDiv(n, kThreadsPerBlock), kThreadsPerBlock, 0, stream>>>(device_buf, n);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_out, device_buf, bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, stream));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  float ms = 0.0f;
  CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));

  size_t free_bytes = 0, total_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  cudaPointerAttributes attrs;
  CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(&attrs, device_buf));

  CUDA_RETURN_IF_ERROR(cudaFree(device_buf));
  CUDA_RETURN_IF_ERROR(cudaEventDestroy(start));
  CUDA_RETURN_IF_ERROR(cudaEventDestroy(stop));
  CUDA_RETURN_IF_ERROR(cudaStreamDestroy(stream));
  const char* name = cudaGetErrorName(cudaErrorInvalidValue);  // "cudaErrorInvalidValue" stays a string
  (void)name;
  return cudaPeekAtLastError();
}

cudaError_t PinnedStaging(size_t bytes, void** pinned) {
  CUDA_RETURN_IF_ERROR(cudaHostAlloc(pinned, bytes, cudaHostAllocPortable));
  return cudaFreeHost(*pinned);
}
