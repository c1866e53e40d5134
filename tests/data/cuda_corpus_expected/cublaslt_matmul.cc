// cuBLASLt: matmul with a fused bias + ReLU epilogue.
#include <hipblaslt/hipblaslt.h>
#include <hip/hip_runtime.h>

hipblasStatus_t MatmulBiasRelu(hipblasLtHandle_t lt, hipStream_t stream, int m, int n, int k, const float* a,
                              const float* b, const float* bias, float* d, void* workspace, size_t ws_size) {
  hipblasLtMatmulDesc_t op;
  hipblasLtMatrixLayout_t la, lb, ld;
  hipblasLtMatmulDescCreate(&op, HIPBLAS_COMPUTE_32F, HIP_R_32F);
  hipblasLtEpilogue_t epilogue = HIPBLASLT_EPILOGUE_RELU_BIAS;
  hipblasLtMatmulDescSetAttribute(op, HIPBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  hipblasLtMatmulDescSetAttribute(op, HIPBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  hipblasLtMatrixLayoutCreate(&la, HIP_R_32F, m, k, m);
  hipblasLtMatrixLayoutCreate(&lb, HIP_R_32F, k, n, k);
  hipblasLtMatrixLayoutCreate(&ld, HIP_R_32F, m, n, m);
  hipblasLtMatmulPreference_t pref;
  hipblasLtMatmulPreferenceCreate(&pref);
  hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof(ws_size));
  hipblasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  hipblasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found);
  const float alpha = 1.0f, beta = 0.0f;
  hipblasStatus_t status = hipblasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo,
                                         workspace, ws_size, stream);
  hipblasLtMatmulPreferenceDestroy(pref);
  hipblasLtMatrixLayoutDestroy(la);
  hipblasLtMatrixLayoutDestroy(lb);
  hipblasLtMatrixLayoutDestroy(ld);
  hipblasLtMatmulDescDestroy(op);
  return status;
}
