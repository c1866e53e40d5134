// Error checking and launch helpers shared by the corpus (the kind every CUDA EP carries).
#pragma once
#include <cuda_runtime.h>
#include <cstdio>

#define CUDA_RETURN_IF_ERROR(expr)                                          \
  do {                                                                      \
    cudaError_t _status = (expr);                                           \
    if (_status != cudaSuccess) {                                           \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n",                      \
                   cudaGetErrorString(_status), __FILE__, __LINE__);        \
      return _status;                                                       \
    }                                                                       \
  } while (0)

constexpr int kThreadsPerBlock = 256;

inline int CeilDiv(int a, int b) { return (a + b - 1) / b; }

#ifdef __CUDACC__
#define CORPUS_DEVICE __device__ __forceinline__
#else
#define CORPUS_DEVICE inline
#endif
