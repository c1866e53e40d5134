// bfloat16 and fp8 types: cuda_bf16.h / cuda_fp8.h (HIP headers for these arrived after HIP 5.2).
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

__global__ void Bf16ToFloat(const __nv_bfloat16* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __bfloat162float(in[i]);
}

__global__ void QuantizeE4M3(const float* in, __nv_fp8_storage_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __nv_cvt_float_to_fp8(in[i], __NV_SATFINITE, __NV_E4M3);
}

__global__ void PairAdd(const nv_bfloat162* a, const nv_bfloat162* b, nv_bfloat162* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd2(a[i], b[i]);
}
