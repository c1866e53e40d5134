// Warp-level reductions: the warp-size assumptions hipify must warn about.
#pragma once
#include <cuda_runtime.h>

#define FULL_WARP_MASK 0xffffffff

template <typename T>
__device__ __forceinline__ T WarpReduceSum(T val) {
  for (int offset = 16; offset > 0; offset /= 2) {
    val += __shfl_down_sync(FULL_WARP_MASK, val, offset);
  }
  return val;
}

template <typename T>
__device__ __forceinline__ T WarpAllReduceMax(T val, int width) {
  for (int mask = width / 2; mask > 0; mask /= 2) {
    T other = __shfl_xor_sync(0xffffffff, val, mask, width);
    val = other > val ? other : val;
  }
  return val;
}
