// The two entry points ONNX Runtime looks up in a plugin execution provider library.
//
// No ORT headers are available to this tree, and none are needed: the umbrella and the backend shims only
// pass ORT's objects along, so every Ort* type stays an opaque pointer here. A null OrtStatus* means success.
#pragma once

#include <cstddef>

struct OrtApiBase;
struct OrtEpFactory;
struct OrtLogger;
struct OrtStatus;

#ifdef _WIN32
// A DLL exports what is marked, and nothing else once anything is.
#define AMDGPU_EP_EXPORT __declspec(dllexport)
#else
#define AMDGPU_EP_EXPORT __attribute__((visibility("default")))
#endif

extern "C" {

// Signatures of the entry points, for the libraries this tree loads at run time.
using CreateEpFactoriesFn = OrtStatus* (*)(const char* registered_name, const OrtApiBase* ort_api_base,
                                           const OrtLogger* default_logger, OrtEpFactory** factories,
                                           size_t max_factories, size_t* num_factories);
using ReleaseEpFactoryFn = OrtStatus* (*)(OrtEpFactory* factory);

AMDGPU_EP_EXPORT OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* ort_api_base,
                                              const OrtLogger* default_logger, OrtEpFactory** factories,
                                              size_t max_factories, size_t* num_factories);
AMDGPU_EP_EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory);

}  // extern "C"
