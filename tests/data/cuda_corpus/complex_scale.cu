// cuComplex arithmetic in a kernel.
#include <cuComplex.h>
#include <cuda_runtime.h>

__global__ void ComplexScale(cuFloatComplex* data, cuFloatComplex factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuFloatComplex v = cuCmulf(data[i], factor);
    float magnitude = cuCabsf(v);
    data[i] = magnitude > 1.0f ? make_cuFloatComplex(cuCrealf(v) / magnitude, cuCimagf(v) / magnitude) : v;
  }
}

cudaError_t LaunchComplexScale(cuFloatComplex* data, float re, float im, int n, cudaStream_t s) {
  ComplexScale<<<(n + 127) / 128, 128, 0, s>>>(data, make_cuFloatComplex(re, im), n);
  return cudaGetLastError();
}
