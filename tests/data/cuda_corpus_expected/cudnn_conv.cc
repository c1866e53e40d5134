// cuDNN: handle, tensor and activation descriptors, an activation forward pass.
#include <miopen/miopen.h>
#include <hip/hip_runtime.h>

#define CUDNN_RETURN_IF_ERROR(expr)                       \
  do {                                                    \
    miopenStatus_t _s = (expr);                            \
    if (_s != miopenStatusSuccess) return _s;            \
  } while (0)

miopenStatus_t Relu(miopenHandle_t handle, hipStream_t stream, const float* x, float* y, int n, int c,
                   int h, int w) {
  CUDNN_RETURN_IF_ERROR(miopenSetStream(handle, stream));
  miopenTensorDescriptor_t desc;
  CUDNN_RETURN_IF_ERROR(miopenCreateTensorDescriptor(&desc));
  int dims[4] = {n, c, h, w};
  int strides[4] = {c * h * w, h * w, w, 1};
  CUDNN_RETURN_IF_ERROR(miopenSetTensorDescriptor(desc, miopenFloat, 4, dims, strides));
  miopenActivationDescriptor_t act;
  CUDNN_RETURN_IF_ERROR(miopenCreateActivationDescriptor(&act));
  const float alpha = 1.0f, beta = 0.0f;
  CUDNN_RETURN_IF_ERROR(miopenActivationForward(handle, act, &alpha, desc, x, &beta, desc, y));
  CUDNN_RETURN_IF_ERROR(miopenDestroyActivationDescriptor(act));
  return miopenDestroyTensorDescriptor(desc);
}

const char* StatusText(miopenStatus_t status) { return miopenGetErrorString(status); }
