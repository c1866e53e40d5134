// Drives the umbrella's OrtEpFactory with ONNX Runtime's real objects, for machines where no backend offers a
// device (so ORT itself never calls CreateEp): ORT registers the umbrella, then this program asks the
// umbrella for a factory of its own and calls CreateEp with the CPU's real OrtHardwareDevice and real
// session options. Prints one line per step on stdout; the umbrella's log lines go to stderr.
//
//   umbrella_route_driver LIBONNXRUNTIME LIBAMDGPU_EP LIBPROBE [KEY=VALUE session config entries...]
//
// Built with -DPROBE -shared, the same file is the probe: a plugin EP library offering no factory, which
// ORT registers only to hand it ORT's default OrtLogger (a backend EP logs through it; no public API
// creates one).
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "onnxruntime_c_api.h"

#ifdef PROBE
extern "C" {
__attribute__((visibility("default"))) const OrtLogger* g_probe_logger = nullptr;
__attribute__((visibility("default"))) OrtStatus* CreateEpFactories(const char*, const OrtApiBase*,
                                                                    const OrtLogger* logger, OrtEpFactory**,
                                                                    size_t, size_t* num_factories) {
  g_probe_logger = logger;
  *num_factories = 0;
  return nullptr;
}
__attribute__((visibility("default"))) OrtStatus* ReleaseEpFactory(OrtEpFactory*) { return nullptr; }
}
#else
namespace {

const OrtApi* api = nullptr;

bool Ok(OrtStatus* status, const char* what) {
  if (status == nullptr) return true;
  std::printf("%s: error %d: %s\n", what, static_cast<int>(api->GetErrorCode(status)), api->GetErrorMessage(status));
  api->ReleaseStatus(status);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  void* ort = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (ort == nullptr) return std::printf("dlopen %s: %s\n", argv[1], dlerror()), 2;
  auto get_base = reinterpret_cast<const OrtApiBase* (*)()>(dlsym(ort, "OrtGetApiBase"));
  const OrtApiBase* base = get_base();
  api = base->GetApi(24);
  OrtEnv* env = nullptr;
  if (!Ok(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "route", &env), "CreateEnv")) return 1;
  if (!Ok(api->RegisterExecutionProviderLibrary(env, "AMDGPUExecutionProvider", argv[2]), "register")) return 1;
  std::printf("registered\n");
  if (!Ok(api->RegisterExecutionProviderLibrary(env, "probe", argv[3]), "register probe")) return 1;
  void* probe = dlopen(argv[3], RTLD_NOW | RTLD_NOLOAD);
  const OrtLogger* logger = probe ? *static_cast<const OrtLogger**>(dlsym(probe, "g_probe_logger")) : nullptr;
  if (logger == nullptr) return std::printf("the probe got no logger\n"), 1;

  const OrtEpDevice* const* devices = nullptr;
  size_t num_devices = 0;
  if (!Ok(api->GetEpDevices(env, &devices, &num_devices), "GetEpDevices")) return 1;
  const OrtHardwareDevice* cpu = nullptr;
  for (size_t i = 0; i < num_devices; ++i) {
    std::printf("device %s\n", api->EpDevice_EpName(devices[i]));
    if (api->HardwareDevice_Type(api->EpDevice_Device(devices[i])) == OrtHardwareDeviceType_CPU)
      cpu = api->EpDevice_Device(devices[i]);
  }
  if (cpu == nullptr) return std::printf("no CPU device\n"), 1;

  // The library ORT loaded (same handle, same state): a factory of our own, to call CreateEp on.
  void* umbrella = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
  if (umbrella == nullptr) return std::printf("umbrella not loaded by ORT\n"), 1;
  using Create = OrtStatus* (*)(const char*, const OrtApiBase*, const OrtLogger*, OrtEpFactory**, size_t, size_t*);
  using Release = OrtStatus* (*)(OrtEpFactory*);
  auto create = reinterpret_cast<Create>(dlsym(umbrella, "CreateEpFactories"));
  auto release = reinterpret_cast<Release>(dlsym(umbrella, "ReleaseEpFactory"));
  OrtEpFactory* factory = nullptr;
  size_t count = 0;
  if (!Ok(create("AMDGPUExecutionProvider", base, logger, &factory, 1, &count), "CreateEpFactories")) return 1;
  if (count != 1) return std::printf("factories: %zu\n", count), 1;
  std::printf("factory %s vendor %s vendor_id 0x%04x version_supported %u\n", factory->GetName(factory),
              factory->GetVendor(factory), factory->GetVendorId(factory), factory->ort_version_supported);

  OrtEpDevice* offered[8] = {};
  size_t num_offered = 0;
  if (!Ok(factory->GetSupportedDevices(factory, &cpu, 1, offered, 8, &num_offered), "GetSupportedDevices")) return 1;
  std::printf("offered for the CPU: %zu\n", num_offered);

  OrtSessionOptions* options = nullptr;
  if (!Ok(api->CreateSessionOptions(&options), "CreateSessionOptions")) return 1;
  for (int i = 4; i < argc; ++i) {
    const std::string entry = argv[i];
    const auto eq = entry.find('=');
    if (!Ok(api->AddSessionConfigEntry(options, entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str()),
            "AddSessionConfigEntry"))
      return 1;
  }
  OrtEp* ep = nullptr;
  const OrtKeyValuePairs* metadata = nullptr;
  if (Ok(factory->CreateEp(factory, &cpu, &metadata, 1, options, logger, &ep), "CreateEp")) {
    std::printf("CreateEp: ok\n");
    factory->ReleaseEp(factory, ep);
  }
  api->ReleaseSessionOptions(options);
  Ok(release(factory), "ReleaseEpFactory");
  dlclose(umbrella);
  Ok(api->UnregisterExecutionProviderLibrary(env, "AMDGPUExecutionProvider"), "unregister");
  Ok(api->UnregisterExecutionProviderLibrary(env, "probe"), "unregister probe");
  api->ReleaseEnv(env);
  std::printf("done\n");
  return 0;
}
#endif
