// cuFFT: batched real-to-complex forward and complex-to-real inverse transforms.
#include <cufft.h>
#include <cuda_runtime.h>

cufftResult RoundTripFft(cufftReal* signal, cufftComplex* spectrum, int n, int batch, cudaStream_t stream) {
  cufftHandle forward, inverse;
  cufftResult r = cufftPlan1d(&forward, n, CUFFT_R2C, batch);
  if (r != CUFFT_SUCCESS) return r;
  r = cufftPlan1d(&inverse, n, CUFFT_C2R, batch);
  if (r != CUFFT_SUCCESS) return r;
  cufftSetStream(forward, stream);
  cufftSetStream(inverse, stream);
  r = cufftExecR2C(forward, signal, spectrum);
  if (r == CUFFT_SUCCESS) r = cufftExecC2R(inverse, spectrum, signal);
  cufftDestroy(forward);
  cufftDestroy(inverse);
  return r;
}

int Direction(bool inverse) { return inverse ? CUFFT_INVERSE : CUFFT_FORWARD; }
