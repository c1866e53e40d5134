#include "ep_library.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace amdgpu_ep {

void LogLine(const std::string& tag, const std::string& line) {
  // One fprintf per line so that lines from several threads or libraries do not interleave.
  std::fprintf(stderr, "[%s] %s\n", tag.c_str(), line.c_str());
}

bool Verbose() {
  const std::string value = Env("AMDGPU_EP_VERBOSE");
  return !value.empty() && value != "0";
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

static std::string Plural(size_t n) { return n == 1 ? "1 factory" : std::to_string(n) + " factories"; }

bool EpLibrary::Load(const std::string& path) {
  std::string why;
  void* handle = OpenLibrary(path, &why);
  if (handle == nullptr) {
    LogLine(tag_, "cannot load " + path + ": " + why);
    return false;
  }
  auto create = reinterpret_cast<CreateEpFactoriesFn>(LibrarySymbol(handle, "CreateEpFactories"));
  auto release = reinterpret_cast<ReleaseEpFactoryFn>(LibrarySymbol(handle, "ReleaseEpFactory"));
  if (create == nullptr || release == nullptr) {
    LogLine(tag_, path + " is not a plugin EP library: it does not export CreateEpFactories and ReleaseEpFactory");
    CloseLibrary(handle);
    return false;
  }
  handle_ = handle;
  create_ = create;
  release_ = release;
  path_ = path;
  if (Verbose()) LogLine(tag_, "loaded " + path_);
  return true;
}

void EpLibrary::UnloadIfUnused() {
  if (handle_ == nullptr || !live_.empty()) return;
  CloseLibrary(handle_);
  if (Verbose()) LogLine(tag_, "unloaded " + path_);
  handle_ = nullptr;
  create_ = nullptr;
  release_ = nullptr;
  path_.clear();
}

bool EpLibrary::Create(const std::string& path, const char* registered_name, const OrtApiBase* ort_api_base,
                       const OrtLogger* default_logger, OrtEpFactory** factories, size_t max_factories,
                       size_t* num_factories, OrtStatus** status) {
  *num_factories = 0;
  *status = nullptr;
  if (handle_ == nullptr && !Load(path)) return false;
  *status = create_(registered_name, ort_api_base, default_logger, factories, max_factories, num_factories);
  if (*status != nullptr) *num_factories = 0;  // ORT ignores the factories of a failed call
  for (size_t i = 0; i < *num_factories; ++i) live_.insert(factories[i]);
  if (Verbose()) LogLine(tag_, "forwarded " + Plural(*num_factories) + " from " + path_);
  UnloadIfUnused();  // a call that gave no factory must not pin the library
  return true;
}

OrtStatus* EpLibrary::Release(OrtEpFactory* factory) {
  const auto it = live_.find(factory);
  if (it == live_.end()) return nullptr;  // callers check Owns() first
  OrtStatus* status = release_(factory);
  live_.erase(it);
  if (Verbose()) LogLine(tag_, "released a factory of " + path_ + " (" + std::to_string(live_.size()) + " left)");
  UnloadIfUnused();
  return status;
}

}  // namespace amdgpu_ep
