// cuBLAS host code: handle on a stream, half GEMM through GemmEx, strided batches.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CUBLAS_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    cublasStatus_t _s = (expr);                              \
    if (_s != CUBLAS_STATUS_SUCCESS) return _s;              \
  } while (0)

cublasStatus_t HalfGemm(cublasHandle_t handle, cudaStream_t stream, int m, int n, int k,
                        const __half* a, const __half* b, __half* c) {
  CUBLAS_RETURN_IF_ERROR(cublasSetStream(handle, stream));
  CUBLAS_RETURN_IF_ERROR(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  const float alpha = 1.0f, beta = 0.0f;
  return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, a, CUDA_R_16F, m, b, CUDA_R_16F, n,
                      &beta, c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
}

cublasStatus_t BatchedSgemm(cublasHandle_t handle, int m, int n, int k, const float* a, const float* b,
                            float* c, int batch) {
  const float alpha = 1.0f, beta = 0.0f;
  return cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m,
                                   static_cast<long long>(m) * k, b, k, static_cast<long long>(k) * n, &beta,
                                   c, m, static_cast<long long>(m) * n, batch);
}

cublasStatus_t CreateHandle(cublasHandle_t* handle) {
  CUBLAS_RETURN_IF_ERROR(cublasCreate(handle));
  return cublasSetMathMode(*handle, CUBLAS_DEFAULT_MATH);
}
