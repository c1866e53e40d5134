// Driver API: load a code object at run time and launch a kernel from it (host-only C++).
#include <cuda.h>
#include <cstddef>

#define CU_RETURN_IF_ERROR(expr)                     \
  do {                                               \
    CUresult _r = (expr);                            \
    if (_r != CUDA_SUCCESS) return _r;               \
  } while (0)

CUresult LaunchFromModule(const char* path, const char* kernel_name, CUdeviceptr data, int n) {
  CU_RETURN_IF_ERROR(cuInit(0));
  CUdevice device;
  CU_RETURN_IF_ERROR(cuDeviceGet(&device, 0));
  int major = 0;
  CU_RETURN_IF_ERROR(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CUcontext context;
  CU_RETURN_IF_ERROR(cuCtxCreate(&context, 0, device));
  CUmodule module;
  CU_RETURN_IF_ERROR(cuModuleLoad(&module, path));
  CUfunction function;
  CU_RETURN_IF_ERROR(cuModuleGetFunction(&function, module, kernel_name));
  void* args[] = {&data, &n};
  CU_RETURN_IF_ERROR(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_RETURN_IF_ERROR(cuCtxSynchronize());
  CU_RETURN_IF_ERROR(cuModuleUnload(module));
  return cuCtxDestroy(context);
}

CUresult AllocScratch(CUdeviceptr* ptr, size_t bytes) {
  CU_RETURN_IF_ERROR(cuMemAlloc(ptr, bytes));
  return cuMemFree(*ptr);
}
