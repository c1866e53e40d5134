// The AMD GPU umbrella EP: one plugin EP library that ORT registers, routing to a backend shim chosen by
// the profile (see profile.h). Factories come back from the backend unchanged; the umbrella remembers which
// backend made each one, so that ReleaseEpFactory reaches the same backend and the last release unloads it.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "amdgpu_ep/plugin_ep_abi.h"
#include "backends.h"
#include "ep_library.h"
#include "profile.h"

namespace {

using amdgpu_ep::Backend;
using amdgpu_ep::EpLibrary;
using amdgpu_ep::LogLine;

constexpr const char* kTag = "amdgpu-ep";

std::mutex g_mutex;
std::map<std::string, EpLibrary> g_loaded;  // by profile; an entry lives as long as the process

std::string AcceptedProfiles() {
  std::string list = "auto";
  for (const Backend& b : amdgpu_ep::kBackends) list += std::string(", ") + b.profile;
  for (const auto& alias : amdgpu_ep::kAliases) list += std::string(", ") + alias.name;
  return list;
}

// The backends a profile value stands for, in the order to try them; empty for an unknown value.
std::vector<const Backend*> BackendsFor(const std::string& value) {
  std::string name = value;
  for (const auto& alias : amdgpu_ep::kAliases) {
    if (name == alias.name) name = alias.profile;
  }
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
  const std::string path = dir + "/" + backend.library;
  if (amdgpu_ep::FileExists(path)) return path;
  std::string line = std::string("backend library not found: ") + backend.library + " (profile " +
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
  // Problems with the choice of backend are reported and give no factory rather than an error status:
  // ORT then registers the library without devices, exactly like a machine without that backend.
  amdgpu_ep::Profile profile;
  if (!amdgpu_ep::ResolveProfile(&profile)) return nullptr;
  const std::vector<const Backend*> candidates = BackendsFor(profile.value);
  if (candidates.empty() && profile.value != "auto") {
    LogLine(kTag, "unknown profile '" + profile.value + "' (from " + profile.source +
                      "); accepted: " + AcceptedProfiles());
    return nullptr;
  }
  if (amdgpu_ep::Verbose()) LogLine(kTag, "profile " + profile.value + " (from " + profile.source + ")");

  std::string tried;
  for (const Backend* backend : candidates) {
    tried += (tried.empty() ? "" : ", ") + std::string(backend->profile);
    EpLibrary& library = g_loaded.try_emplace(backend->profile, kTag).first->second;
    const std::string path = library.loaded() ? library.path() : FindShim(*backend);
    if (path.empty()) continue;
    OrtStatus* status = nullptr;
    library.Create(path, registered_name, ort_api_base, default_logger, factories, max_factories,
                   num_factories, &status);
    // An error from a backend is the backend's answer; hiding it behind the next backend would lose it.
    if (status != nullptr || *num_factories > 0) return status;
  }
  if (profile.value == "auto") {
    LogLine(kTag, "profile auto: no backend gave a factory (tried " +
                      (tried.empty() ? std::string("none: no backend was built") : tried) + ")");
  }
  return nullptr;
}

OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& entry : g_loaded) {
    if (entry.second.Owns(factory)) return entry.second.Release(factory);
  }
  // Without ORT's API table there is no way to build an OrtStatus, so the mistake is reported here.
  LogLine(kTag, "ReleaseEpFactory: unknown factory, ignored");
  return nullptr;
}

}  // extern "C"
