// The __CUDA_ARCH__ / __CUDACC__ family as real code uses it.
#pragma once

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
#define CORPUS_HAS_FAST_ATOMICS 1
#else
#define CORPUS_HAS_FAST_ATOMICS 0
#endif

#if defined(__CUDACC__) || defined(__NVCC__)
#define CORPUS_HOST_ONLY(x) (x)
#else
#define CORPUS_HOST_ONLY(x) (x)
#endif

#ifdef __CUDA_ARCH__
#define CORPUS_ON_DEVICE 1
#else
#define CORPUS_ON_DEVICE 0
#endif
