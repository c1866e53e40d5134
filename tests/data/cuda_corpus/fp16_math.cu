// Half precision: cuda_fp16.h types and intrinsics, guarded by __CUDA_ARCH__ like ORT's kernels.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "arch_macros.cuh"

__device__ __forceinline__ half2 FusedMulAdd(half2 a, half2 b, half2 c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  return __hfma2(a, b, c);
#else
  float2 fa = __half22float2(a), fb = __half22float2(b), fc = __half22float2(c);
  return __floats2half2_rn(fa.x * fb.x + fc.x, fa.y * fb.y + fc.y);
#endif
}

__global__ void HalfAxpy(const __half* x, __half* y, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    half2 a = __float2half2_rn(alpha);
    half2 xv = reinterpret_cast<const half2*>(x)[i];
    half2 yv = reinterpret_cast<half2*>(y)[i];
    reinterpret_cast<half2*>(y)[i] = FusedMulAdd(a, xv, yv);
  } else if (2 * i < n) {
    y[2 * i] = __float2half(alpha * __half2float(x[2 * i]) + __half2float(y[2 * i]));
  }
}

__global__ void HalfRelu(__half* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = __hgt(data[i], __float2half(0.0f)) ? data[i] : __float2half(0.0f);
}

cudaError_t LaunchHalfAxpy(const __half* x, __half* y, float alpha, int n, cudaStream_t s) {
  HalfAxpy<<<(n / 2 + 255) / 256 + 1, 256, 0, s>>>(x, y, alpha, n);
  HalfRelu<<<(n + 255) / 256, 256, 0, s>>>(y, n);
  return CORPUS_HOST_ONLY(cudaGetLastError());
}
