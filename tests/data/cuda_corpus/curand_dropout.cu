// cuRAND: a host generator fills a mask; a device kernel draws with Philox states (dropout).
#include <curand.h>
#include <curand_kernel.h>
#include <cuda_runtime.h>

#define CURAND_RETURN_IF_ERROR(expr)                       \
  do {                                                     \
    curandStatus_t _s = (expr);                            \
    if (_s != CURAND_STATUS_SUCCESS) return static_cast<int>(_s); \
  } while (0)

__global__ void Dropout(const float* in, float* out, float ratio, unsigned long long seed,
                        unsigned long long offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, offset, &state);
  if (i < n) {
    float u = curand_uniform(&state);
    out[i] = u < ratio ? 0.0f : in[i] / (1.0f - ratio);
  }
}

__global__ void NoiseXorwow(float* out, unsigned long long seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  curandState_t state;
  curand_init(seed, i, 0, &state);
  if (i < n) out[i] = curand_normal(&state) + static_cast<float>(curand(&state) & 1u);
}

int FillUniform(float* device_out, size_t n, unsigned long long seed, cudaStream_t stream) {
  curandGenerator_t gen;
  CURAND_RETURN_IF_ERROR(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CURAND_RETURN_IF_ERROR(curandSetStream(gen, stream));
  CURAND_RETURN_IF_ERROR(curandSetPseudoRandomGeneratorSeed(gen, seed));
  CURAND_RETURN_IF_ERROR(curandGenerateUniform(gen, device_out, n));
  CURAND_RETURN_IF_ERROR(curandGenerateNormal(gen, device_out, n, 0.0f, 1.0f));
  CURAND_RETURN_IF_ERROR(curandDestroyGenerator(gen));
  Dropout<<<(n + 255) / 256, 256, 0, stream>>>(device_out, device_out, 0.1f, seed, 0, static_cast<int>(n));
  NoiseXorwow<<<(n + 255) / 256, 256, 0, stream>>>(device_out, seed, static_cast<int>(n));
  return static_cast<int>(cudaGetLastError());
}
