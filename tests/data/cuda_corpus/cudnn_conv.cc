// cuDNN: handle, tensor and activation descriptors, an activation forward pass.
#include <cudnn.h>
#include <cuda_runtime.h>

#define CUDNN_RETURN_IF_ERROR(expr)                       \
  do {                                                    \
    cudnnStatus_t _s = (expr);                            \
    if (_s != CUDNN_STATUS_SUCCESS) return _s;            \
  } while (0)

cudnnStatus_t Relu(cudnnHandle_t handle, cudaStream_t stream, const float* x, float* y, int n, int c,
                   int h, int w) {
  CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
  cudnnTensorDescriptor_t desc;
  CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&desc));
  int dims[4] = {n, c, h, w};
  int strides[4] = {c * h * w, h * w, w, 1};
  CUDNN_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(desc, CUDNN_DATA_FLOAT, 4, dims, strides));
  cudnnActivationDescriptor_t act;
  CUDNN_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&act));
  const float alpha = 1.0f, beta = 0.0f;
  CUDNN_RETURN_IF_ERROR(cudnnActivationForward(handle, act, &alpha, desc, x, &beta, desc, y));
  CUDNN_RETURN_IF_ERROR(cudnnDestroyActivationDescriptor(act));
  return cudnnDestroyTensorDescriptor(desc);
}

const char* StatusText(cudnnStatus_t status) { return cudnnGetErrorString(status); }
