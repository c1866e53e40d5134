// The AMD GPU umbrella EP: one plugin EP library that ORT registers. It loads the backend shims of the
// default profile (see profile.h; "auto" loads every backend this build includes), takes their factories,
// and gives ORT one factory of its own in front of them (factory.h), which routes each session to a
// backend by the session's profile option. The umbrella remembers which shim made each backend factory,
// so that releasing the umbrella's factory releases them there, and the last release unloads the shim.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "amdgpu_ep/plugin_ep_abi.h"
#include "backends.h"
#include "ep_library.h"
#include "factory.h"
#include "profile.h"

namespace {

using amdgpu_ep::Backend;
using amdgpu_ep::BackendFactory;
using amdgpu_ep::EpLibrary;
using amdgpu_ep::LogLine;
using amdgpu_ep::UmbrellaFactory;

constexpr const char* kTag = "amdgpu-ep";

std::mutex g_mutex;
std::map<std::string, EpLibrary> g_loaded;  // by profile; an entry lives as long as the process
std::map<OrtEpFactory*, std::unique_ptr<UmbrellaFactory>> g_umbrellas;

// The backends a (canonical) profile stands for, in the order to try them.
std::vector<const Backend*> BackendsFor(const std::string& name) {
  std::vector<const Backend*> chosen;
  for (const Backend& b : amdgpu_ep::kBackends) {
    // "auto" only tries what this build includes: a shim left over from another build is not a choice
    // the user made. Naming a backend explicitly always tries it, and the hint says if it was not built.
    if ((name == "auto" && b.built) || name == b.profile) chosen.push_back(&b);
  }
  return chosen;
}

// The backend's shim path, or "" after saying where it looked.
std::string FindShim(const Backend& backend) {
  const std::string from_env = amdgpu_ep::Env("AMDGPU_EP_BACKEND_DIR");
  const std::string dir = from_env.empty() ? amdgpu_ep::ThisLibraryDir() : from_env;
  const std::string file = amdgpu_ep::LibraryFile(backend.library);
  const std::string path = amdgpu_ep::JoinPath(dir, file);
  if (amdgpu_ep::FileExists(path)) return path;
  std::string line = "backend library not found: " + file + " (profile " +
                     backend.profile + "); looked at " + path +
                     (from_env.empty() ? " (beside amdgpu-ep; $AMDGPU_EP_BACKEND_DIR unset)"
                                       : " ($AMDGPU_EP_BACKEND_DIR=" + from_env + ")");
  if (!backend.built) line += std::string("; this amdgpu-ep was built without it: configure with -D") +
                              backend.option + "=ON";
  LogLine(kTag, line);
  return {};
}

}  // namespace

extern "C" {

OrtStatus* CreateEpFactories(const char* registered_name, const OrtApiBase* ort_api_base,
                             const OrtLogger* default_logger, OrtEpFactory** factories, size_t max_factories,
                             size_t* num_factories) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *num_factories = 0;
  const OrtApi* api = ort_api_base->GetApi(amdgpu_ep::kOrtApiVersionUsed);
  if (api == nullptr) {
    // Without the API table there is no OrtStatus to return: say it here and offer nothing.
    LogLine(kTag, std::string("ONNX Runtime ") + ort_api_base->GetVersionString() + " lacks ORT API version " +
                      std::to_string(amdgpu_ep::kOrtApiVersionUsed) + "; install onnxruntime >= 1.24");
    return nullptr;
  }
  const std::string name = registered_name;
  amdgpu_ep::Profile profile;
  std::string error;
  if (!amdgpu_ep::ResolveProfile(&profile, &error)) return api->CreateStatus(ORT_INVALID_ARGUMENT, (name + ": " + error).c_str());
  const std::string canonical = amdgpu_ep::CanonicalProfile(profile.value);
  if (canonical.empty()) {
    return api->CreateStatus(ORT_INVALID_ARGUMENT, (name + ": unknown profile '" + profile.value + "' (from " +
                                                    profile.source + "); accepted: " + amdgpu_ep::AcceptedProfiles())
                                                       .c_str());
  }
  if (amdgpu_ep::Verbose()) LogLine(kTag, "profile " + profile.value + " (from " + profile.source + ")");
  if (max_factories < 1) return nullptr;

  std::vector<BackendFactory> backends;
  std::string tried;
  for (const Backend* backend : BackendsFor(canonical)) {
    tried += (tried.empty() ? "" : ", ") + std::string(backend->profile);
    EpLibrary& library = g_loaded.try_emplace(backend->profile, kTag).first->second;
    const std::string path = library.loaded() ? library.path() : FindShim(*backend);
    if (path.empty()) continue;
    OrtEpFactory* made[8] = {};
    size_t count = 0;
    OrtStatus* status = nullptr;
    library.Create(path, registered_name, ort_api_base, default_logger, made, 8, &count, &status);
    if (status != nullptr) {
      // An error from a backend is the backend's answer; hiding it behind the next backend would lose it.
      for (const BackendFactory& b : backends) g_loaded.at(b.profile).Release(b.factory);
      return status;
    }
    for (size_t i = 0; i < count; ++i) backends.push_back({backend->profile, made[i]});
  }
  if (backends.empty()) {
    LogLine(kTag, "profile " + profile.value + ": no backend gave a factory (tried " +
                      (tried.empty() ? std::string("none: no backend was built") : tried) + ")");
    return nullptr;
  }
  auto umbrella = std::make_unique<UmbrellaFactory>(*api, name, std::move(backends), profile.value, profile.source);
  factories[0] = umbrella.get();
  *num_factories = 1;
  g_umbrellas.emplace(umbrella.get(), std::move(umbrella));
  return nullptr;
}

OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_umbrellas.find(factory);
  if (it == g_umbrellas.end()) {
    LogLine(kTag, "ReleaseEpFactory: unknown factory, ignored");
    return nullptr;
  }
  OrtStatus* first_error = nullptr;
  for (const BackendFactory& b : it->second->backends()) {
    OrtStatus* status = g_loaded.at(b.profile).Release(b.factory);
    if (first_error == nullptr) first_error = status;
  }
  g_umbrellas.erase(it);
  return first_error;
}

}  // extern "C"
