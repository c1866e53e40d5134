// Loading a plugin EP library on demand and keeping it loaded exactly as long as ORT holds its factories.
// Shared by the umbrella (which loads backend shims) and the backend shims (which load the real EPs).
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "amdgpu_ep/plugin_ep_abi.h"
#include "dynlib.h"

namespace amdgpu_ep {

// One line to stderr, prefixed with the library's tag: "[migraphx-backend] ...".
void LogLine(const std::string& tag, const std::string& line);
// AMDGPU_EP_VERBOSE=1 turns on the progress lines (loaded, forwarded, released, unloaded).
bool Verbose();
// Value of an environment variable, or "" when unset.
std::string Env(const char* name);

// A plugin EP library and the factories it has handed out. It is loaded by the first Create and unloaded
// after the last of its factories is released; a load that fails changes nothing, so the next Create tries
// again. Not synchronized: each library's entry points hold one mutex around every call into it.
class EpLibrary {
 public:
  explicit EpLibrary(std::string tag) : tag_(std::move(tag)) {}
  EpLibrary(const EpLibrary&) = delete;
  EpLibrary& operator=(const EpLibrary&) = delete;

  // Loads `path` unless a library is loaded already (then `path` is unused: that library's factories are
  // alive, and a second copy could never be unloaded), and forwards CreateEpFactories to it. Returns false,
  // with *num_factories = 0 and a line on stderr, when the library cannot be loaded or is not a plugin EP.
  bool Create(const std::string& path, const char* registered_name, const OrtApiBase* ort_api_base,
              const OrtLogger* default_logger, OrtEpFactory** factories, size_t max_factories,
              size_t* num_factories, OrtStatus** status);
  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  bool Owns(OrtEpFactory* factory) const { return live_.count(factory) != 0; }
  // Forwards ReleaseEpFactory to the library that made `factory`, and unloads it if it was the last one.
  OrtStatus* Release(OrtEpFactory* factory);

 private:
  bool Load(const std::string& path);
  void UnloadIfUnused();

  std::string tag_;
  std::string path_;
  void* handle_ = nullptr;
  CreateEpFactoriesFn create_ = nullptr;
  ReleaseEpFactoryFn release_ = nullptr;
  // A multiset because an EP may hand out the same (singleton) factory on every call; ORT still releases
  // it once per call, so each handout counts.
  std::multiset<OrtEpFactory*> live_;
};

}  // namespace amdgpu_ep
