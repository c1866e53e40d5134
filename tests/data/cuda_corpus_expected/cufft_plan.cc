// cuFFT: batched real-to-complex forward and complex-to-real inverse transforms.
#include <hipfft/hipfft.h>
#include <hip/hip_runtime.h>

hipfftResult RoundTripFft(hipfftReal* signal, hipfftComplex* spectrum, int n, int batch, hipStream_t stream) {
  hipfftHandle forward, inverse;
  hipfftResult r = hipfftPlan1d(&forward, n, HIPFFT_R2C, batch);
  if (r != HIPFFT_SUCCESS) return r;
  r = hipfftPlan1d(&inverse, n, HIPFFT_C2R, batch);
  if (r != HIPFFT_SUCCESS) return r;
  hipfftSetStream(forward, stream);
  hipfftSetStream(inverse, stream);
  r = hipfftExecR2C(forward, signal, spectrum);
  if (r == HIPFFT_SUCCESS) r = hipfftExecC2R(inverse, spectrum, signal);
  hipfftDestroy(forward);
  hipfftDestroy(inverse);
  return r;
}

int Direction(bool inverse) { return inverse ? HIPFFT_BACKWARD : HIPFFT_FORWARD; }
