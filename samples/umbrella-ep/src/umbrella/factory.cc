#include "factory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "backends.h"
#include "ep_library.h"

namespace amdgpu_ep {
namespace {

constexpr const char* kTag = "amdgpu-ep";
constexpr const char* kVendor = "AMD";
constexpr uint32_t kAmdVendorId = 0x1002;
constexpr const char* kVersion = "0.1.0";

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string Describe(const OrtApi& api, const OrtHardwareDevice* device) {
  static const char* const kTypes[] = {"CPU", "GPU", "NPU"};
  const auto type = static_cast<int>(api.HardwareDevice_Type(device));
  char ids[48];
  std::snprintf(ids, sizeof ids, " vendor_id=0x%04x device_id=0x%04x", api.HardwareDevice_VendorId(device),
                api.HardwareDevice_DeviceId(device));
  return std::string(type >= 0 && type < 3 ? kTypes[type] : "device") + ids;
}

UmbrellaFactory* Self(OrtEpFactory* f) { return static_cast<UmbrellaFactory*>(f); }
const UmbrellaFactory* Self(const OrtEpFactory* f) { return static_cast<const UmbrellaFactory*>(f); }

// The backend OrtEps whose allocator and stream functions the umbrella stands in for (Interpose), with the
// originals. Process-wide because ORT calls them with nothing but the OrtEp.
struct EpHook {
  UmbrellaFactory* umbrella;
  OrtEpFactory* backend;
  UmbrellaFactory::EpAllocatorFn allocator;
  UmbrellaFactory::EpStreamFn stream;
};
std::mutex g_hooks_mutex;
std::map<const OrtEp*, EpHook> g_hooks;

bool Hooked(const OrtEp* ep, EpHook* hook) {
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  const auto it = g_hooks.find(ep);
  if (it == g_hooks.end()) return false;
  *hook = it->second;
  return true;
}

}  // namespace

std::string AcceptedProfiles() {
  std::string list = "auto";
  for (const Backend& b : kBackends) list += std::string(", ") + b.profile;
  for (const Alias& alias : kAliases) list += std::string(", ") + alias.name;
  return list;
}

std::string CanonicalProfile(const std::string& value) {
  std::string name = Lower(value);
  for (const Alias& alias : kAliases) {
    if (name == alias.name) name = alias.profile;
  }
  if (name == "auto") return name;
  for (const Backend& b : kBackends) {
    if (name == b.profile) return name;
  }
  return {};
}

UmbrellaFactory::UmbrellaFactory(const OrtApi& api, std::string name, std::vector<BackendFactory> backends,
                                 std::string default_profile, std::string default_source)
    : OrtEpFactory{},
      api_(api),
      ep_api_(*api.GetEpApi()),
      name_(std::move(name)),
      option_prefix_("ep." + Lower(name_) + "."),
      backends_(std::move(backends)),
      default_profile_(std::move(default_profile)),
      default_source_(std::move(default_source)),
      memory_(std::make_shared<MemoryMap>(api_, ep_api_)) {
  // The header this was compiled with: ORT calls only the functions that version of the struct has.
  ort_version_supported = ORT_API_VERSION;
  GetName = [](const OrtEpFactory* f) noexcept { return Self(f)->name_.c_str(); };
  GetVendor = [](const OrtEpFactory*) noexcept { return kVendor; };
  GetSupportedDevices = [](OrtEpFactory* f, const OrtHardwareDevice* const* devices, size_t num_devices,
                           OrtEpDevice** ep_devices, size_t max_ep_devices, size_t* num_ep_devices) noexcept {
    return Self(f)->SupportedDevices(devices, num_devices, ep_devices, max_ep_devices, num_ep_devices);
  };
  CreateEp = [](OrtEpFactory* f, const OrtHardwareDevice* const* devices, const OrtKeyValuePairs* const* metadata,
                size_t num_devices, const OrtSessionOptions* options, const OrtLogger* logger, OrtEp** ep) noexcept {
    return Self(f)->Create(devices, metadata, num_devices, options, logger, ep);
  };
  ReleaseEp = [](OrtEpFactory* f, OrtEp* ep) noexcept {
    UmbrellaFactory* self = Self(f);
    std::unique_lock<std::mutex> lock(self->mutex_);
    const auto it = self->ep_owner_.find(ep);
    if (it == self->ep_owner_.end()) return LogLine(kTag, "ReleaseEp: unknown EP, ignored");
    OrtEpFactory* backend = it->second;
    self->ep_owner_.erase(it);
    lock.unlock();
    {
      std::lock_guard<std::mutex> hooks_lock(g_hooks_mutex);
      g_hooks.erase(ep);
    }
    backend->ReleaseEp(backend, ep);
  };
  GetVendorId = [](const OrtEpFactory*) noexcept { return kAmdVendorId; };
  GetVersion = [](const OrtEpFactory*) noexcept { return kVersion; };
  ValidateCompiledModelCompatibilityInfo = [](OrtEpFactory* f, const OrtHardwareDevice* const* devices,
                                              size_t num_devices, const char* info,
                                              OrtCompiledModelCompatibility* out) noexcept -> OrtStatus* {
    OrtEpFactory* b = Self(f)->PrimaryLocked();
    if (b != nullptr && Has(b, 23) && b->ValidateCompiledModelCompatibilityInfo != nullptr)
      return b->ValidateCompiledModelCompatibilityInfo(b, devices, num_devices, info, out);
    *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
    return nullptr;
  };
  CreateAllocator = [](OrtEpFactory* f, const OrtMemoryInfo* info, const OrtKeyValuePairs* options,
                       OrtAllocator** allocator) noexcept -> OrtStatus* {
    UmbrellaFactory* self = Self(f);
    *allocator = nullptr;
    if (const MemoryMap::Entry* ours = self->memory_->Find(info)) {
      OrtEpFactory* b = ours->backend;
      if (!Has(b, 23) || b->CreateAllocator == nullptr) return nullptr;
      OrtAllocator* inner = nullptr;
      if (OrtStatus* status = b->CreateAllocator(b, ours->theirs, options, &inner)) return status;
      *allocator = self->Forward(inner, b, ours->ours);
      return nullptr;
    }
    OrtEpFactory* b = nullptr;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      const auto it = self->memory_owner_.find(info);
      b = it != self->memory_owner_.end() ? it->second : self->Primary();
    }
    if (b == nullptr || !Has(b, 23) || b->CreateAllocator == nullptr) return nullptr;
    OrtStatus* status = b->CreateAllocator(b, info, options, allocator);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (status == nullptr && *allocator != nullptr) self->allocator_owner_[*allocator] = b;
    return status;
  };
  ReleaseAllocator = [](OrtEpFactory* f, OrtAllocator* allocator) noexcept {
    UmbrellaFactory* self = Self(f);
    std::unique_lock<std::mutex> lock(self->mutex_);
    const auto it = self->allocator_owner_.find(allocator);
    if (it == self->allocator_owner_.end()) return;
    OrtEpFactory* b = it->second;
    self->allocator_owner_.erase(it);
    lock.unlock();
    if (ForwardingAllocator* forwarding = ForwardingAllocator::Of(allocator)) {
      b->ReleaseAllocator(b, forwarding->inner);
      delete forwarding;
      return;
    }
    b->ReleaseAllocator(b, allocator);
  };
  CreateDataTransfer = [](OrtEpFactory* f, OrtDataTransferImpl** data_transfer) noexcept -> OrtStatus* {
    *data_transfer = nullptr;
    OrtEpFactory* b = Self(f)->PrimaryLocked();
    if (b == nullptr || !Has(b, 23) || b->CreateDataTransfer == nullptr) return nullptr;
    OrtDataTransferImpl* inner = nullptr;
    if (OrtStatus* status = b->CreateDataTransfer(b, &inner)) return status;
    *data_transfer = WrapDataTransfer(inner, Self(f)->memory_);
    return nullptr;
  };
  IsStreamAware = [](const OrtEpFactory* f) noexcept {
    OrtEpFactory* b = Self(f)->PrimaryLocked();
    return b != nullptr && Has(b, 23) && b->IsStreamAware != nullptr && b->IsStreamAware(b);
  };
  CreateSyncStreamForDevice = [](OrtEpFactory* f, const OrtMemoryDevice* device, const OrtKeyValuePairs* options,
                                 OrtSyncStreamImpl** stream) noexcept -> OrtStatus* {
    *stream = nullptr;
    OrtEpFactory* b = Self(f)->PrimaryLocked();
    if (b == nullptr || !Has(b, 23) || b->CreateSyncStreamForDevice == nullptr) return nullptr;
    return b->CreateSyncStreamForDevice(b, Self(f)->memory_->Theirs(device), options, stream);
  };
#if ORT_API_VERSION >= 24
  GetHardwareDeviceIncompatibilityDetails = [](OrtEpFactory* f, const OrtHardwareDevice* hw,
                                               OrtDeviceEpIncompatibilityDetails* details) noexcept -> OrtStatus* {
    OrtEpFactory* b = Self(f)->PrimaryLocked();
    if (b == nullptr || !Has(b, 24) || b->GetHardwareDeviceIncompatibilityDetails == nullptr) return nullptr;
    return b->GetHardwareDeviceIncompatibilityDetails(b, hw, details);
  };
  // Importers and graphics interop are handed an OrtEpDevice, and ours is not the backend's: not offered.
  CreateExternalResourceImporterForDevice = [](OrtEpFactory*, const OrtEpDevice*,
                                               OrtExternalResourceImporterImpl** out) noexcept -> OrtStatus* {
    *out = nullptr;
    return nullptr;
  };
  GetNumCustomOpDomains = [](OrtEpFactory*, size_t* num_domains) noexcept -> OrtStatus* {
    *num_domains = 0;
    return nullptr;
  };
  GetCustomOpDomains = [](OrtEpFactory*, OrtCustomOpDomain**, size_t) noexcept -> OrtStatus* { return nullptr; };
#endif
#if ORT_API_VERSION >= 25
  InitGraphicsInterop = nullptr;
  DeinitGraphicsInterop = nullptr;
#endif
}

OrtStatus* UmbrellaFactory::Error(OrtErrorCode code, const std::string& message) const {
  return api_.CreateStatus(code, (name_ + ": " + message).c_str());
}

OrtEpFactory* UmbrellaFactory::Primary() const {
  // Callers hold mutex_ or call PrimaryLocked().
  for (const BackendFactory& b : backends_) {
    for (const auto& owner : device_owner_) {
      if (owner.second->factory == b.factory) return b.factory;
    }
  }
  return backends_.empty() ? nullptr : backends_.front().factory;
}

OrtEpFactory* UmbrellaFactory::PrimaryLocked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Primary();
}

// The backend's metadata, less the keys ORT fills in for the library that offers the device: ORT rejects
// a device whose metadata names its own EP version (seen with ORT 1.30 on a GPU), and the library path
// must be ours, not the backend's.
OrtKeyValuePairs* UmbrellaFactory::CopyMetadata(const OrtKeyValuePairs* theirs) const {
  OrtKeyValuePairs* copy = nullptr;
  api_.CreateKeyValuePairs(&copy);
  if (theirs == nullptr) return copy;
  const char* const* keys = nullptr;
  const char* const* values = nullptr;
  size_t n = 0;
  api_.GetKeyValuePairs(theirs, &keys, &values, &n);
  for (size_t k = 0; k < n; ++k) {
    const std::string key = keys[k];
    if (key == "version" || key == "library_path") continue;
    api_.AddKeyValuePair(copy, keys[k], values[k]);
  }
  return copy;
}

OrtStatus* UmbrellaFactory::SupportedDevices(const OrtHardwareDevice* const* devices, size_t num_devices,
                                             OrtEpDevice** ep_devices, size_t max_ep_devices,
                                             size_t* num_ep_devices) {
  std::lock_guard<std::mutex> lock(mutex_);
  *num_ep_devices = 0;
  std::vector<OrtEpDevice*> offered(max_ep_devices, nullptr);
  for (const BackendFactory& backend : backends_) {
    size_t count = 0;
    OrtEpFactory* b = backend.factory;
    if (OrtStatus* status = b->GetSupportedDevices(b, devices, num_devices, offered.data(), max_ep_devices, &count))
      return status;
    for (size_t i = 0; i < count; ++i) {
      OrtEpDevice* theirs = offered[i];
      const OrtHardwareDevice* hw = api_.EpDevice_Device(theirs);
      const auto taken = device_owner_.find(hw);
      OrtStatus* status = nullptr;
      if ((taken == device_owner_.end() || taken->second->factory == b) && *num_ep_devices < max_ep_devices) {
        OrtEpDevice* ours = nullptr;
        OrtKeyValuePairs* metadata = CopyMetadata(api_.EpDevice_EpMetadata(theirs));
        status = ep_api_.CreateEpDevice(this, hw, metadata, nullptr, &ours);
        api_.ReleaseKeyValuePairs(metadata);
        std::vector<std::pair<std::string, std::string>> defaults;
        if (const OrtKeyValuePairs* options = api_.EpDevice_EpOptions(theirs)) {
          const char* const* keys = nullptr;
          const char* const* values = nullptr;
          size_t n = 0;
          api_.GetKeyValuePairs(options, &keys, &values, &n);
          for (size_t k = 0; k < n; ++k) defaults.emplace_back(keys[k], values[k]);
        }
        device_options_[hw] = std::move(defaults);
        // The backend's GPU memory is offered as the umbrella's (device_memory.h); other memory as it is.
        // The backend's memory infos belong to its factory and outlive its OrtEpDevice.
        for (OrtDeviceMemoryType type : {OrtDeviceMemoryType_DEFAULT, OrtDeviceMemoryType_HOST_ACCESSIBLE}) {
          const OrtMemoryInfo* info = status == nullptr ? api_.EpDevice_MemoryInfo(theirs, type) : nullptr;
          if (info == nullptr) continue;
          const OrtMemoryInfo* offered = nullptr;
          status = memory_->Offer(info, b, &offered);
          if (status == nullptr) status = ep_api_.EpDevice_AddAllocatorInfo(ours, offered);
          if (offered == info) memory_owner_[info] = b;
        }
        if (status == nullptr) {
          ep_devices[(*num_ep_devices)++] = ours;
          device_owner_[hw] = &backend;
          if (Verbose()) {
            LogLine(kTag, "offering " + Describe(api_, hw) + " of backend " + backend.profile + " (" +
                              b->GetName(b) + ") as " + name_);
          }
        } else if (ours != nullptr) {
          ep_api_.ReleaseEpDevice(ours);
        }
      }
      ep_api_.ReleaseEpDevice(theirs);  // ours carries what ORT needs; the backend's is not handed on
      if (status != nullptr) {
        for (size_t j = i + 1; j < count; ++j) ep_api_.ReleaseEpDevice(offered[j]);
        return status;
      }
    }
  }
  return nullptr;
}

OrtStatus* UmbrellaFactory::Route(const OrtHardwareDevice* const* devices, size_t num_devices,
                                  const OrtSessionOptions* session_options, const BackendFactory** chosen) const {
  const std::string key = option_prefix_ + "profile";
  std::string value = default_profile_;
  std::string source = default_source_;
  int has = 0;
  if (OrtStatus* status = api_.HasSessionConfigEntry(session_options, key.c_str(), &has)) return status;
  if (has) {
    size_t size = 0;
    if (OrtStatus* status = api_.GetSessionConfigEntry(session_options, key.c_str(), nullptr, &size)) return status;
    std::string buffer(size, '\0');
    if (OrtStatus* status = api_.GetSessionConfigEntry(session_options, key.c_str(), buffer.data(), &size))
      return status;
    value = buffer.c_str();
    source = "session option " + key;
  }
  const std::string profile = CanonicalProfile(value);
  if (profile.empty()) {
    return Error(ORT_INVALID_ARGUMENT, "unknown profile '" + value + "' (from " + source +
                                           "); accepted: " + AcceptedProfiles());
  }
  if (num_devices == 0) return Error(ORT_INVALID_ARGUMENT, "CreateEp called without devices");
  std::string loaded;
  for (const BackendFactory& b : backends_) loaded += (loaded.empty() ? "" : ", ") + b.profile;
  // "auto": the backend that offered the (first) device; a named profile: that backend, if it is loaded.
  const auto first = device_owner_.find(devices[0]);
  const BackendFactory* want = first == device_owner_.end() ? nullptr : first->second;
  if (profile != "auto") {
    want = nullptr;
    for (const BackendFactory& b : backends_) {
      if (b.profile == profile && want == nullptr) want = &b;
    }
    if (want == nullptr) {
      return Error(ORT_INVALID_ARGUMENT, "profile '" + value + "' (from " + source + "): the " + profile +
                                             " backend is not loaded (loaded: " + (loaded.empty() ? "none" : loaded) +
                                             "; the default profile " + default_profile_ + " from " + default_source_ +
                                             " decides which backends load)");
    }
  }
  if (want != nullptr && Verbose()) LogRoute(value, source, *want, session_options);
  for (size_t i = 0; i < num_devices; ++i) {
    const auto owner = device_owner_.find(devices[i]);
    const BackendFactory* offered_by = owner == device_owner_.end() ? nullptr : owner->second;
    if (offered_by == nullptr || want == nullptr || offered_by->factory != want->factory) {
      const std::string what = Describe(api_, devices[i]);
      std::string why = want == nullptr ? "no backend offered the " + what
                                        : "backend " + want->profile + " does not offer the " + what;
      why += offered_by != nullptr && want != nullptr ? " (backend " + offered_by->profile + " does)"
                                                      : " (devices come from get_ep_devices())";
      return Error(ORT_INVALID_ARGUMENT, "profile '" + value + "' (from " + source + "): " + why);
    }
  }
  *chosen = want;
  return nullptr;
}

void UmbrellaFactory::LogRoute(const std::string& value, const std::string& source, const BackendFactory& to,
                               const OrtSessionOptions* session_options) const {
  OrtKeyValuePairs* entries = nullptr;
  std::string passed;
  if (api_.GetSessionOptionsConfigEntries(session_options, &entries) == nullptr) {
    const char* const* keys = nullptr;
    const char* const* values = nullptr;
    size_t count = 0;
    api_.GetKeyValuePairs(entries, &keys, &values, &count);
    for (size_t i = 0; i < count; ++i) {
      if (std::string(keys[i]).rfind("ep." + to.profile + ".", 0) == 0)
        passed += std::string(passed.empty() ? "" : ", ") + keys[i] + "=" + values[i];
    }
    api_.ReleaseKeyValuePairs(entries);
  }
  LogLine(kTag, "session: profile " + value + " (from " + source + ") -> backend " + to.profile + " (" +
                    to.factory->GetName(to.factory) + ")" + (passed.empty() ? "" : "; options passed on: " + passed));
}

OrtStatus* UmbrellaFactory::Create(const OrtHardwareDevice* const* devices, const OrtKeyValuePairs* const* metadata,
                                   size_t num_devices, const OrtSessionOptions* session_options,
                                   const OrtLogger* logger, OrtEp** ep) {
  *ep = nullptr;
  const BackendFactory* chosen = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (OrtStatus* status = Route(devices, num_devices, session_options, &chosen)) return status;
  }
  OrtEpFactory* b = chosen->factory;
  // The backend gets the session options as they are: its own ep.<backend>.* keys (ep.migraphx.* for the
  // MIGraphX backend) are read by the backend EP itself. Only the defaults its devices carried are added,
  // under its own prefix, where the user did not set them.
  std::vector<std::pair<std::string, std::string>> defaults;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string prefix = "ep." + Lower(b->GetName(b)) + ".";
    for (size_t i = 0; i < num_devices; ++i) {
      for (const auto& option : device_options_[devices[i]]) defaults.emplace_back(prefix + option.first, option.second);
    }
  }
  OrtSessionOptions* with_defaults = nullptr;
  if (!defaults.empty()) {
    if (OrtStatus* status = api_.CloneSessionOptions(session_options, &with_defaults)) return status;
    for (const auto& option : defaults) {
      int has = 0;
      OrtStatus* status = api_.HasSessionConfigEntry(with_defaults, option.first.c_str(), &has);
      if (status == nullptr && !has)
        status = api_.AddSessionConfigEntry(with_defaults, option.first.c_str(), option.second.c_str());
      if (status != nullptr) {
        api_.ReleaseSessionOptions(with_defaults);
        return status;
      }
    }
  }
  OrtStatus* status = b->CreateEp(b, devices, metadata, num_devices, with_defaults ? with_defaults : session_options,
                                  logger, ep);
  if (with_defaults != nullptr) api_.ReleaseSessionOptions(with_defaults);  // CreateEp must not keep it
  if (status != nullptr || *ep == nullptr) return status;
  Interpose(*ep, b);
  std::lock_guard<std::mutex> lock(mutex_);
  ep_owner_[*ep] = b;
  return nullptr;
}

// ORT asks the session's OrtEp for its allocators and streams before the factory, with the memory infos of
// the umbrella's devices. The backend's OrtEp is handed to ORT as it is (its kernels get it back from ORT
// and take it for their own), so its two function pointers are pointed at the umbrella, which calls the
// originals with the backend's memory.
void UmbrellaFactory::Interpose(OrtEp* ep, OrtEpFactory* backend) {
  if (ep->ort_version_supported < 23) return;
  EpHook hook{this, backend, ep->CreateAllocator, ep->CreateSyncStreamForDevice};
  if (hook.allocator != nullptr) {
    ep->CreateAllocator = [](OrtEp* self, const OrtMemoryInfo* info, OrtAllocator** out) noexcept -> OrtStatus* {
      EpHook h{};
      *out = nullptr;
      if (!Hooked(self, &h)) return nullptr;
      return h.umbrella->EpAllocator(self, h.allocator, h.backend, info, out);
    };
  }
  if (hook.stream != nullptr) {
    ep->CreateSyncStreamForDevice = [](OrtEp* self, const OrtMemoryDevice* device,
                                       OrtSyncStreamImpl** out) noexcept -> OrtStatus* {
      EpHook h{};
      *out = nullptr;
      if (!Hooked(self, &h)) return nullptr;
      return h.umbrella->EpStream(self, h.stream, device, out);
    };
  }
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  g_hooks[ep] = hook;
}

OrtStatus* UmbrellaFactory::EpAllocator(OrtEp* ep, EpAllocatorFn original, OrtEpFactory* backend,
                                        const OrtMemoryInfo* info, OrtAllocator** allocator) {
  const MemoryMap::Entry* ours = memory_->Find(info);
  const OrtMemoryInfo* theirs = ours ? ours->theirs : info;
  OrtAllocator* inner = nullptr;
  if (OrtStatus* status = original(ep, theirs, &inner)) return status;
  // An OrtEp may leave allocators to its factory (null, no error); ORT would then ask the factory.
  if (inner == nullptr && Has(backend, 23) && backend->CreateAllocator != nullptr) {
    if (OrtStatus* status = backend->CreateAllocator(backend, theirs, nullptr, &inner)) return status;
  }
  if (inner == nullptr) return nullptr;
  if (ours != nullptr) {
    *allocator = Forward(inner, backend, ours->ours);
    return nullptr;
  }
  // ORT releases it through the umbrella's factory, which hands it back to the backend's.
  std::lock_guard<std::mutex> lock(mutex_);
  allocator_owner_[inner] = backend;
  *allocator = inner;
  return nullptr;
}

OrtStatus* UmbrellaFactory::EpStream(OrtEp* ep, EpStreamFn original, const OrtMemoryDevice* device,
                                     OrtSyncStreamImpl** stream) {
  return original(ep, memory_->Theirs(device), stream);
}

OrtAllocator* UmbrellaFactory::Forward(OrtAllocator* inner, OrtEpFactory* backend, const OrtMemoryInfo* ours) {
  if (inner == nullptr) return nullptr;
  auto* forwarding = new ForwardingAllocator(inner, ours);
  if (Verbose()) {
    const OrtMemoryInfo* theirs = inner->Info(inner);
    const char* their_name = "?";
    int id = 0;
    // Only for the log line: a failed lookup keeps the placeholder, and its status is released, not leaked.
    if (theirs != nullptr) {
      if (OrtStatus* status = api_.MemoryInfoGetName(theirs, &their_name)) api_.ReleaseStatus(status);
    }
    if (OrtStatus* status = api_.MemoryInfoGetId(ours, &id)) api_.ReleaseStatus(status);
    LogLine(kTag, "allocator for AMD GPU memory (device " + std::to_string(id) + "): the backend " +
                      backend->GetName(backend) + "'s, for its memory " + their_name);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  allocator_owner_[forwarding] = backend;
  return forwarding;
}

}  // namespace amdgpu_ep
