// cuSPARSE generic API: y = A * x with A in CSR.
#include <cusparse.h>
#include <cuda_runtime.h>

#define CUSPARSE_RETURN_IF_ERROR(expr)                           \
  do {                                                           \
    cusparseStatus_t _s = (expr);                                \
    if (_s != CUSPARSE_STATUS_SUCCESS) return static_cast<int>(_s); \
  } while (0)

int CsrSpMV(int rows, int cols, int nnz, int* row_offsets, int* col_indices, float* values,
            float* x, float* y, cudaStream_t stream) {
  cusparseHandle_t handle;
  CUSPARSE_RETURN_IF_ERROR(cusparseCreate(&handle));
  CUSPARSE_RETURN_IF_ERROR(cusparseSetStream(handle, stream));
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vec_x, vec_y;
  CUSPARSE_RETURN_IF_ERROR(cusparseCreateCsr(&mat, rows, cols, nnz, row_offsets, col_indices, values,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CUSPARSE_RETURN_IF_ERROR(cusparseCreateDnVec(&vec_x, cols, x, CUDA_R_32F));
  CUSPARSE_RETURN_IF_ERROR(cusparseCreateDnVec(&vec_y, rows, y, CUDA_R_32F));
  float alpha = 1.0f, beta = 0.0f;
  size_t buffer_size = 0;
  CUSPARSE_RETURN_IF_ERROR(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat,
                                                   vec_x, &beta, vec_y, CUDA_R_32F,
                                                   CUSPARSE_MV_ALG_DEFAULT, &buffer_size));
  void* buffer = nullptr;
  if (cudaMalloc(&buffer, buffer_size) != cudaSuccess) return -1;
  CUSPARSE_RETURN_IF_ERROR(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vec_x, &beta,
                                        vec_y, CUDA_R_32F, CUSPARSE_MV_ALG_DEFAULT, buffer));
  cudaFree(buffer);
  CUSPARSE_RETURN_IF_ERROR(cusparseDestroyDnVec(vec_x));
  CUSPARSE_RETURN_IF_ERROR(cusparseDestroyDnVec(vec_y));
  CUSPARSE_RETURN_IF_ERROR(cusparseDestroySpMat(mat));
  return static_cast<int>(cusparseDestroy(handle));
}
