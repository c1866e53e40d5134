// cuBLAS host code: handle on a stream, half GEMM through GemmEx, strided batches.
#include <hipblas/hipblas.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define CUBLAS_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    hipblasStatus_t _s = (expr);                              \
    if (_s != HIPBLAS_STATUS_SUCCESS) return _s;              \
  } while (0)

hipblasStatus_t HalfGemm(hipblasHandle_t handle, hipStream_t stream, int m, int n, int k,
                        const __half* a, const __half* b, __half* c) {
  CUBLAS_RETURN_IF_ERROR(hipblasSetStream(handle, stream));
  CUBLAS_RETURN_IF_ERROR(hipblasSetPointerMode(handle, HIPBLAS_POINTER_MODE_HOST));
  const float alpha = 1.0f, beta = 0.0f;
  return hipblasGemmEx(handle, HIPBLAS_OP_N, HIPBLAS_OP_T, m, n, k, &alpha, a, HIP_R_16F, m, b, HIP_R_16F, n,
                      &beta, c, HIP_R_16F, m, HIPBLAS_COMPUTE_32F, HIPBLAS_GEMM_DEFAULT);
}

hipblasStatus_t BatchedSgemm(hipblasHandle_t handle, int m, int n, int k, const float* a, const float* b,
                            float* c, int batch) {
  const float alpha = 1.0f, beta = 0.0f;
  return hipblasSgemmStridedBatched(handle, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, a, m,
                                   static_cast<long long>(m) * k, b, k, static_cast<long long>(k) * n, &beta,
                                   c, m, static_cast<long long>(m) * n, batch);
}

hipblasStatus_t CreateHandle(hipblasHandle_t* handle) {
  CUBLAS_RETURN_IF_ERROR(hipblasCreate(handle));
  return hipblasSetMathMode(*handle, HIPBLAS_DEFAULT_MATH);
}
