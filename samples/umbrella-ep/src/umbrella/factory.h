// The umbrella's OrtEpFactory: one EP, under the name ORT registered the library with
// ("AMDGPUExecutionProvider"), in front of the backends' own factories.
//
// Devices: each backend factory is asked which hardware it supports; every device it offers is offered again
// under the umbrella's name (same hardware, metadata and options), the first backend in
// profile order winning a device two backends offer. Sessions: CreateEp reads the session option
// ep.<name lowercased>.profile and hands the session to that backend's factory, whose OrtEp then runs it;
// the session options, ep.migraphx.* included, reach the backend unchanged. Memory: the devices carry the
// umbrella's own AMD GPU memory infos (device_memory.h); allocators, data transfer and streams are the
// backend's, asked for with the backend's memory infos, so the umbrella never touches a tensor's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device_memory.h"
#include "onnxruntime_c_api.h"

#if ORT_API_VERSION < 24
#error "the umbrella needs ORT's C API headers of ORT 1.24 or newer (OrtEpFactory of API version 24)"
#endif

namespace amdgpu_ep {

// The ORT API version the umbrella asks for: every function it calls exists since 1.23, and the wheel
// requires onnxruntime >= 1.24 (AMD's umbrella's own floor).
inline constexpr uint32_t kOrtApiVersionUsed = 24;

struct BackendFactory {
  std::string profile;  // "migraphx", "hipdnn", ...
  OrtEpFactory* factory;
};

class UmbrellaFactory : public OrtEpFactory {
 public:
  // `backends` in profile "auto" order; `default_profile` applies to sessions that do not set one.
  UmbrellaFactory(const OrtApi& api, std::string name, std::vector<BackendFactory> backends,
                  std::string default_profile, std::string default_source);

  const std::vector<BackendFactory>& backends() const { return backends_; }

  // For the backend OrtEp's own CreateAllocator / CreateSyncStreamForDevice, which ORT prefers to the
  // factory's: called with the umbrella's memory, they get the backend's (see Create).
  using EpAllocatorFn = decltype(OrtEp::CreateAllocator);
  using EpStreamFn = decltype(OrtEp::CreateSyncStreamForDevice);
  OrtStatus* EpAllocator(OrtEp* ep, EpAllocatorFn original, OrtEpFactory* backend, const OrtMemoryInfo* info,
                         OrtAllocator** allocator);
  OrtStatus* EpStream(OrtEp* ep, EpStreamFn original, const OrtMemoryDevice* device, OrtSyncStreamImpl** stream);

 private:
  OrtStatus* Error(OrtErrorCode code, const std::string& message) const;
  OrtStatus* SupportedDevices(const OrtHardwareDevice* const* devices, size_t num_devices,
                              OrtEpDevice** ep_devices, size_t max_ep_devices, size_t* num_ep_devices);
  OrtStatus* Create(const OrtHardwareDevice* const* devices, const OrtKeyValuePairs* const* metadata,
                    size_t num_devices, const OrtSessionOptions* session_options, const OrtLogger* logger,
                    OrtEp** ep);
  // The backend a session goes to, or an error status saying why none can take it.
  OrtStatus* Route(const OrtHardwareDevice* const* devices, size_t num_devices,
                   const OrtSessionOptions* session_options, const BackendFactory** chosen) const;
  // One stderr line (AMDGPU_EP_VERBOSE=1): the route taken and the backend's own options it receives.
  void LogRoute(const std::string& value, const std::string& source, const BackendFactory& to,
                const OrtSessionOptions* session_options) const;
  // The backend whose devices, allocators, data transfer and streams ORT uses outside a session.
  OrtEpFactory* Primary() const;
  OrtEpFactory* PrimaryLocked() const;
  OrtKeyValuePairs* CopyMetadata(const OrtKeyValuePairs* theirs) const;
  // `inner`, made by `backend` for the umbrella's memory `ours`, as an allocator reporting `ours`.
  OrtAllocator* Forward(OrtAllocator* inner, OrtEpFactory* backend, const OrtMemoryInfo* ours);
  // Sends the OrtEp's allocator and stream requests through EpAllocator / EpStream.
  void Interpose(OrtEp* ep, OrtEpFactory* backend);
  static bool Has(const OrtEpFactory* f, uint32_t since) { return f->ort_version_supported >= since; }

  const OrtApi& api_;
  const OrtEpApi& ep_api_;
  std::string name_;
  std::string option_prefix_;  // "ep.<name lowercased>."
  std::vector<BackendFactory> backends_;
  std::string default_profile_;
  std::string default_source_;
  // ORT may create sessions, allocators and devices from several threads; the maps below are shared.
  mutable std::mutex mutex_;
  std::map<const OrtHardwareDevice*, const BackendFactory*> device_owner_;
  // The backend's default options for each device it offered, keyed as it named them; ORT would put them
  // under the umbrella's prefix, so CreateEp hands them to the backend under its own ("ep.<backend>.").
  std::map<const OrtHardwareDevice*, std::vector<std::pair<std::string, std::string>>> device_options_;
  std::map<const OrtMemoryInfo*, OrtEpFactory*> memory_owner_;  // backends' memory offered as it is
  std::shared_ptr<MemoryMap> memory_;  // shared with the data transfers, which ORT may release last
  std::map<const OrtAllocator*, OrtEpFactory*> allocator_owner_;
  std::map<const OrtEp*, OrtEpFactory*> ep_owner_;
};

// The accepted values of the profile option, for messages: "auto, migraphx, hipdnn, directx, llm".
std::string AcceptedProfiles();
// The backend profile a value names (aliases resolved), "auto", or "" for an unknown value.
std::string CanonicalProfile(const std::string& value);

}  // namespace amdgpu_ep
