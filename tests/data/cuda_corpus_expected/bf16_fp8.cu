// bfloat16 and fp8 types: cuda_bf16.h / cuda_fp8.h (HIP headers for these arrived after HIP 5.2).
#include <hip/hip_bf16.h>
#include <hip/hip_fp8.h>
#include <hip/hip_runtime.h>

__global__ void Bf16ToFloat(const __hip_bfloat16* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __bfloat162float(in[i]);
}

__global__ void QuantizeE4M3(const float* in, __hip_fp8_storage_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __hip_cvt_float_to_fp8(in[i], __HIP_SATFINITE, __HIP_E4M3);
}

__global__ void PairAdd(const __hip_bfloat162* a, const __hip_bfloat162* b, __hip_bfloat162* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd2(a[i], b[i]);
}
