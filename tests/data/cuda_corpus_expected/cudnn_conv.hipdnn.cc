// cuDNN: handle, tensor and activation descriptors, an activation forward pass.
#include <hipdnn/hipdnn.h>
#include <hip/hip_runtime.h>

#define CUDNN_RETURN_IF_ERROR(expr)                       \
  do {                                                    \
    hipdnnStatus_t _s = (expr);                            \
    if (_s != HIPDNN_STATUS_SUCCESS) return _s;            \
  } while (0)

hipdnnStatus_t Relu(hipdnnHandle_t handle, hipStream_t stream, const float* x, float* y, int n, int c,
                   int h, int w) {
  CUDNN_RETURN_IF_ERROR(hipdnnSetStream(handle, stream));
  hipdnnTensorDescriptor_t desc;
  CUDNN_RETURN_IF_ERROR(hipdnnCreateTensorDescriptor(&desc));
  int dims[4] = {n, c, h, w};
  int strides[4] = {c * h * w, h * w, w, 1};
  CUDNN_RETURN_IF_ERROR(hipdnnSetTensorNdDescriptor(desc, HIPDNN_DATA_FLOAT, 4, dims, strides));
  hipdnnActivationDescriptor_t act;
  CUDNN_RETURN_IF_ERROR(hipdnnCreateActivationDescriptor(&act));
  const float alpha = 1.0f, beta = 0.0f;
  CUDNN_RETURN_IF_ERROR(hipdnnActivationForward(handle, act, &alpha, desc, x, &beta, desc, y));
  CUDNN_RETURN_IF_ERROR(hipdnnDestroyActivationDescriptor(act));
  return hipdnnDestroyTensorDescriptor(desc);
}

const char* StatusText(hipdnnStatus_t status) { return hipdnnGetErrorString(status); }
