// Power-of-two batch padding for models with a dynamic batch dimension (the MIGraphX EP's
// max_dynamic_batch): programs are compiled once per batch size 1, 2, 4, 8, ..., a batch of n runs as the
// next power of two with the extra rows zeroed, and each output keeps only its first n rows.
//
// Written against the CUDA runtime API on purpose: the toolkit's hipify stage converts it to HIP, and
// CMake compiles the result into migraphx-backend for the requested GPU targets. Nothing here is exported:
// the library's version script exports the two plugin EP entry points only.
#include <cuda_runtime.h>

#include <cstdint>

namespace amdgpu_ep {
namespace batch_pad {

constexpr int kThreads = 256;

// The batch size whose compiled program runs a batch of `batch` rows.
__host__ __device__ constexpr int64_t next_power_of_two(int64_t batch) {
  int64_t padded = 1;
  while (padded < batch) padded <<= 1;
  return padded;
}

static_assert(next_power_of_two(1) == 1 && next_power_of_two(5) == 8 && next_power_of_two(8) == 8,
              "padding must round up to a power of two and keep powers of two");

// The batch is the outermost dimension of an input, so its rows are one contiguous prefix: copy it and
// zero the rest, so padded rows cannot carry stale data into reductions over the batch.
template <typename T>
__global__ void pad_rows(const T* __restrict__ src, T* __restrict__ dst, int64_t valid_elems, int64_t padded_elems) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < padded_elems; i += stride) {
    dst[i] = i < valid_elems ? src[i] : T(0);
  }
}

// Outputs may carry the batch on an inner axis ([outer, padded_batch, inner], e.g. sequence-first
// layouts), so slicing is a strided gather rather than a prefix copy.
template <typename T>
__global__ void slice_rows(const T* __restrict__ src, T* __restrict__ dst, int64_t outer, int64_t padded_batch,
                           int64_t batch, int64_t inner) {
  const int64_t total = outer * batch * inner;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t o = i / (batch * inner);
    const int64_t rest = i % (batch * inner);
    dst[i] = src[o * padded_batch * inner + rest];
  }
}

static unsigned int blocks_for(int64_t elems) {
  const int64_t blocks = (elems + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 1024 ? (blocks < 1 ? 1 : blocks) : 1024);
}

// Copies `batch` rows of `row_elems` values from the host into a new device buffer holding
// next_power_of_two(batch) rows, the extra ones zeroed. The caller owns *padded_input (cudaFree).
template <typename T>
cudaError_t pad_batch_to_device(const T* host_input, int64_t batch, int64_t row_elems, T** padded_input,
                                int64_t* padded_batch, cudaStream_t stream) {
  *padded_input = nullptr;
  *padded_batch = next_power_of_two(batch);
  const int64_t valid = batch * row_elems;
  const int64_t padded = *padded_batch * row_elems;
  T* staging = nullptr;
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&staging), valid * sizeof(T));
  if (err == cudaSuccess) err = cudaMalloc(reinterpret_cast<void**>(padded_input), padded * sizeof(T));
  if (err == cudaSuccess) err = cudaMemcpyAsync(staging, host_input, valid * sizeof(T), cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess) {
    pad_rows<T><<<blocks_for(padded), kThreads, 0, stream>>>(staging, *padded_input, valid, padded);
    err = cudaGetLastError();
  }
  // The staging buffer must outlive the kernel that reads it.
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  const cudaError_t freed = cudaFree(staging);
  if (err == cudaSuccess) err = freed;
  if (err != cudaSuccess) {
    (void)cudaFree(*padded_input);  // the first error is the one worth reporting
    *padded_input = nullptr;
  }
  return err;
}

// Copies the first `batch` of `padded_batch` rows of a device output shaped [outer, padded_batch, inner]
// into host memory shaped [outer, batch, inner].
template <typename T>
cudaError_t slice_batch_to_host(const T* device_output, int64_t outer, int64_t padded_batch, int64_t batch,
                                int64_t inner, T* host_output, cudaStream_t stream) {
  const int64_t total = outer * batch * inner;
  T* sliced = nullptr;
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&sliced), total * sizeof(T));
  if (err == cudaSuccess) {
    slice_rows<T><<<blocks_for(total), kThreads, 0, stream>>>(device_output, sliced, outer, padded_batch, batch, inner);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(host_output, sliced, total * sizeof(T), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  const cudaError_t freed = cudaFree(sliced);
  return err == cudaSuccess ? freed : err;
}

// The element types of the inputs MIGraphX pads: activations (float) and token ids (int64).
template cudaError_t pad_batch_to_device<float>(const float*, int64_t, int64_t, float**, int64_t*, cudaStream_t);
template cudaError_t pad_batch_to_device<int64_t>(const int64_t*, int64_t, int64_t, int64_t**, int64_t*, cudaStream_t);
template cudaError_t slice_batch_to_host<float>(const float*, int64_t, int64_t, int64_t, int64_t, float*, cudaStream_t);
template cudaError_t slice_batch_to_host<int64_t>(const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t*,
                                                  cudaStream_t);

}  // namespace batch_pad
}  // namespace amdgpu_ep
