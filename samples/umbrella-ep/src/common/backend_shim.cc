// A backend shim: a pass-through plugin EP that loads the real EP library of one backend, forwards
// CreateEpFactories and returns that EP's factories unchanged. The umbrella loads shims, never real EPs,
// so a backend's name and location stay the umbrella's business and the real EP needs no changes.
//
// One source for every backend; CMake compiles it once per backend with these definitions:
//   AMDGPU_EP_BACKEND_NAME     the shim's library name, used as the log tag ("migraphx-backend")
//   AMDGPU_EP_BACKEND_ENV      environment variable naming the real EP library ("AMDGPU_MIGRAPHX_EP_LIBRARY")
//   AMDGPU_EP_BACKEND_DEFAULT  library name of the real EP looked for beside the shim when the variable is unset
//   AMDGPU_EP_BACKEND_WHAT     what the real EP is, for messages ("the MIGraphX EP library")
#include <mutex>
#include <string>

#include "amdgpu_ep/plugin_ep_abi.h"
#include "ep_library.h"

namespace {

std::mutex g_mutex;
amdgpu_ep::EpLibrary g_ep{AMDGPU_EP_BACKEND_NAME};

// The real EP library to load, or "" (after saying where it looked) when there is none.
std::string FindRealEp() {
  const std::string from_env = amdgpu_ep::Env(AMDGPU_EP_BACKEND_ENV);
  std::string looked;
  if (!from_env.empty()) {
    // An explicit choice is honoured alone: falling back to another file would hide the user's mistake.
    if (amdgpu_ep::FileExists(from_env)) return from_env;
    looked = "$" AMDGPU_EP_BACKEND_ENV "=" + from_env;
  } else {
    const std::string beside =
        amdgpu_ep::JoinPath(amdgpu_ep::ThisLibraryDir(), amdgpu_ep::LibraryFile(AMDGPU_EP_BACKEND_DEFAULT));
    if (amdgpu_ep::FileExists(beside)) return beside;
    looked = "$" AMDGPU_EP_BACKEND_ENV " (unset), " + beside;
  }
  amdgpu_ep::LogLine(AMDGPU_EP_BACKEND_NAME, "EP library not found: looked at " + looked +
                                                 "; set " AMDGPU_EP_BACKEND_ENV " to " AMDGPU_EP_BACKEND_WHAT);
  return {};
}

}  // namespace

extern "C" {

OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* ort_api_base,
                             const OrtLogger* default_logger, OrtEpFactory** factories, size_t max_factories,
                             size_t* num_factories) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *num_factories = 0;
  // A missing EP is not an error for ORT: registering succeeds with no factories, so a machine without
  // this backend can still load the umbrella and use the others.
  const std::string path = g_ep.loaded() ? g_ep.path() : FindRealEp();
  if (path.empty()) return nullptr;
  OrtStatus* status = nullptr;
  g_ep.Create(path, registered_name, ort_api_base, default_logger, factories, max_factories, num_factories,
              &status);
  return status;
}

OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_ep.Owns(factory)) {
    // Without ORT's API table there is no way to build an OrtStatus, so the mistake is reported here.
    amdgpu_ep::LogLine(AMDGPU_EP_BACKEND_NAME, "ReleaseEpFactory: unknown factory, ignored");
    return nullptr;
  }
  return g_ep.Release(factory);
}

}  // extern "C"
