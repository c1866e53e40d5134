/* The Windows smoke harness: a console program on ONNX Runtime's C API, cross-compiled with MinGW and run
 * under Wine, since no Windows Python can be had here. It loads a Windows onnxruntime.dll by full path,
 * registers a plugin EP DLL and walks the steps the wheel must pass, printing one line each:
 *
 *   ORT <version> (API <n>) from <path>
 *   PASS|FAIL|SKIP register: ...              step 1: registration, and the devices the factory reports
 *   DEVICE <ep name>|<vendor>|<vendor id>|<device id>|<CPU|GPU|NPU>
 *   PASS|FAIL|SKIP device: ...                step 2: a GPU device among them
 *   PASS|FAIL|SKIP session: ...               step 3: the model on that device, CPU fallback off, against the CPU EP
 *
 * and "[harness] begin <step>" on stderr as each step starts.
 *
 *   harness.exe ONNXRUNTIME_DLL EP_DLL REGISTRATION_NAME [MODEL INPUT_ROWS INPUT_COLS [KEY=VALUE ...]]
 *
 * KEY=VALUE: session config entries of the device's session (ep.<name>.* reach the EP, as the recipe's
 * [smoke] session_config says).
 *
 * Exit status: 0 when no step failed, 1 otherwise, 2 for a usage or loading error. Written against the
 * OrtApi of the headers it is compiled with, asking the DLL only for the API version it says it has: every
 * function used here is older than ORT 1.23. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#include "onnxruntime_c_api.h"

static const OrtApi* g_ort;
static int g_failed;

static wchar_t* Wide(const char* text) {
  int n = MultiByteToWideChar(CP_UTF8, 0, text, -1, NULL, 0);
  wchar_t* out = (wchar_t*)calloc((size_t)n + 1, sizeof(wchar_t));
  MultiByteToWideChar(CP_UTF8, 0, text, -1, out, n);
  return out;
}

/* The message of a failed call (and the status released), or NULL for success. */
static char* Failed(OrtStatus* status) {
  if (status == NULL) return NULL;
  const char* message = g_ort->GetErrorMessage(status);
  char* copy = _strdup(message != NULL ? message : "(no message)");
  g_ort->ReleaseStatus(status);
  return copy;
}

/* Marks on stderr where each step begins, so the messages Wine prints (also on stderr) can be told apart by step. */
static void Begin(const char* step) {
  fprintf(stderr, "[harness] begin %s\n", step);
  fflush(stderr);
}

static void Line(const char* verdict, const char* step, const char* text) {
  if (strcmp(verdict, "FAIL") == 0) g_failed = 1;
  printf("%s %s: %s\n", verdict, step, text);
  fflush(stdout);
}

static const char* TypeName(OrtHardwareDeviceType type) {
  switch (type) {
    case OrtHardwareDeviceType_CPU: return "CPU";
    case OrtHardwareDeviceType_GPU: return "GPU";
    case OrtHardwareDeviceType_NPU: return "NPU";
  }
  return "?";
}

/* Runs MODEL (one float input "x" of rows x cols, one float output "y") on a session made from `options`;
 * returns the output's values (count in *n), or NULL with the failing call's message in *why. */
static float* RunModel(OrtEnv* env, OrtSessionOptions* options, const char* model, int rows, int cols,
                       size_t* n, char** why) {
  OrtSession* session = NULL;
  wchar_t* path = Wide(model);
  *why = Failed(g_ort->CreateSession(env, path, options, &session));
  free(path);
  if (*why != NULL) return NULL;
  OrtMemoryInfo* cpu = NULL;
  float* input = (float*)malloc(sizeof(float) * (size_t)(rows * cols));
  for (int i = 0; i < rows * cols; ++i) input[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  int64_t shape[2] = {rows, cols};
  OrtValue* x = NULL;
  OrtValue* y = NULL;
  float* result = NULL;
  const char* input_names[] = {"x"};
  const char* output_names[] = {"y"};
  if ((*why = Failed(g_ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu))) == NULL &&
      (*why = Failed(g_ort->CreateTensorWithDataAsOrtValue(cpu, input, sizeof(float) * (size_t)(rows * cols), shape,
                                                           2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x))) == NULL &&
      (*why = Failed(g_ort->Run(session, NULL, input_names, (const OrtValue* const*)&x, 1, output_names, 1,
                                &y))) == NULL) {
    OrtTensorTypeAndShapeInfo* info = NULL;
    float* data = NULL;
    if ((*why = Failed(g_ort->GetTensorTypeAndShape(y, &info))) == NULL &&
        (*why = Failed(g_ort->GetTensorShapeElementCount(info, n))) == NULL &&
        (*why = Failed(g_ort->GetTensorMutableData(y, (void**)&data))) == NULL) {
      result = (float*)malloc(sizeof(float) * (*n + 1));
      memcpy(result, data, sizeof(float) * *n);
    }
    if (info != NULL) g_ort->ReleaseTensorTypeAndShapeInfo(info);
  }
  if (y != NULL) g_ort->ReleaseValue(y);
  if (x != NULL) g_ort->ReleaseValue(x);
  if (cpu != NULL) g_ort->ReleaseMemoryInfo(cpu);
  free(input);
  g_ort->ReleaseSession(session);
  return result;
}

static char* AddEntries(OrtSessionOptions* options, int count, char** entries) {
  for (int i = 0; i < count; ++i) {
    char* key = _strdup(entries[i]);
    char* value = strchr(key, '=');
    char* why = NULL;
    if (value == NULL) {
      why = _strdup("a session config entry is KEY=VALUE");
    } else {
      *value++ = '\0';
      why = Failed(g_ort->AddSessionConfigEntry(options, key, value));
    }
    free(key);
    if (why != NULL) return why;
  }
  return NULL;
}

static void SessionStep(OrtEnv* env, const OrtEpDevice* device, const char* model, int rows, int cols,
                        int n_entries, char** entries) {
  char text[1024];
  char* why = NULL;
  size_t n_cpu = 0, n_dev = 0;
  OrtSessionOptions* cpu_options = NULL;
  OrtSessionOptions* dev_options = NULL;
  float* expected = NULL;
  float* got = NULL;
  if ((why = Failed(g_ort->CreateSessionOptions(&cpu_options))) == NULL) {
    expected = RunModel(env, cpu_options, model, rows, cols, &n_cpu, &why);
  }
  if (expected == NULL) {
    snprintf(text, sizeof text, "the CPU EP did not run the model: %s", why);
    Line("FAIL", "session", text);
  } else if ((why = Failed(g_ort->CreateSessionOptions(&dev_options))) != NULL ||
             (why = Failed(g_ort->AddSessionConfigEntry(dev_options, "session.disable_cpu_ep_fallback", "1"))) !=
                 NULL ||
             (why = AddEntries(dev_options, n_entries, entries)) != NULL ||
             (why = Failed(g_ort->SessionOptionsAppendExecutionProvider_V2(dev_options, env, &device, 1, NULL, NULL,
                                                                           0))) != NULL ||
             (got = RunModel(env, dev_options, model, rows, cols, &n_dev, &why)) == NULL) {
    snprintf(text, sizeof text, "CPU fallback disabled, the device did not run the model: %s", why);
    Line("FAIL", "session", text);
  } else if (n_dev != n_cpu) {
    snprintf(text, sizeof text, "%zu output values on the device, %zu on the CPU EP", n_dev, n_cpu);
    Line("FAIL", "session", text);
  } else {
    double worst = 0;
    for (size_t i = 0; i < n_cpu; ++i) worst = fmax(worst, fabs((double)got[i] - (double)expected[i]));
    snprintf(text, sizeof text, "%zu values, max |device - CPU EP| = %g", n_cpu, worst);
    Line(worst <= 1e-4 ? "PASS" : "FAIL", "session", text);
  }
  free(why);
  free(expected);
  free(got);
  if (cpu_options != NULL) g_ort->ReleaseSessionOptions(cpu_options);
  if (dev_options != NULL) g_ort->ReleaseSessionOptions(dev_options);
}

int main(int argc, char** argv) {
  if (argc != 4 && argc < 7) {
    fprintf(stderr, "usage: %s ONNXRUNTIME_DLL EP_DLL REGISTRATION_NAME [MODEL INPUT_ROWS INPUT_COLS [KEY=VALUE ...]]\n",
            argv[0]);
    return 2;
  }
  const char* registration = argv[3];
  wchar_t* ort_path = Wide(argv[1]);
  HMODULE ort = LoadLibraryExW(ort_path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
  free(ort_path);
  if (ort == NULL) {
    fprintf(stderr, "cannot load %s: error %lu\n", argv[1], (unsigned long)GetLastError());
    return 2;
  }
  typedef const OrtApiBase*(ORT_API_CALL * GetApiBaseFn)(void);
  GetApiBaseFn get_base = (GetApiBaseFn)(void (*)(void))GetProcAddress(ort, "OrtGetApiBase");
  if (get_base == NULL) {
    fprintf(stderr, "%s does not export OrtGetApiBase: not an onnxruntime.dll\n", argv[1]);
    return 2;
  }
  const OrtApiBase* base = get_base();
  const char* version = base->GetVersionString();
  int major = 0, minor = 0;
  sscanf(version, "%d.%d", &major, &minor);
  uint32_t api = (uint32_t)minor < ORT_API_VERSION ? (uint32_t)minor : ORT_API_VERSION;
  g_ort = base->GetApi(api);
  if (g_ort == NULL || api < 23) {
    fprintf(stderr, "%s is ONNX Runtime %s: the plugin EP API needs 1.23 or newer\n", argv[1], version);
    return 2;
  }
  printf("ORT %s (API %u) from %s\n", version, api, argv[1]);

  OrtEnv* env = NULL;
  char* why = Failed(g_ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "harness", &env));
  if (why != NULL) {
    fprintf(stderr, "CreateEnv: %s\n", why);
    return 2;
  }
  char text[1024];
  Begin("register");
  wchar_t* ep_path = Wide(argv[2]);
  why = Failed(g_ort->RegisterExecutionProviderLibrary(env, registration, ep_path));
  free(ep_path);
  if (why != NULL) {
    snprintf(text, sizeof text, "RegisterExecutionProviderLibrary(%s, %s): %s", registration, argv[2], why);
    Line("FAIL", "register", text);
    return 1;
  }
  const OrtEpDevice* const* devices = NULL;
  size_t count = 0;
  if ((why = Failed(g_ort->GetEpDevices(env, &devices, &count))) != NULL) {
    snprintf(text, sizeof text, "GetEpDevices: %s", why);
    Line("FAIL", "register", text);
    return 1;
  }
  const OrtEpDevice* gpu = NULL;
  size_t ours = 0;
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(g_ort->EpDevice_EpName(devices[i]), registration) != 0) continue;
    const OrtHardwareDevice* hw = g_ort->EpDevice_Device(devices[i]);
    OrtHardwareDeviceType type = g_ort->HardwareDevice_Type(hw);
    printf("DEVICE %s|%s|0x%04x|0x%04x|%s\n", g_ort->EpDevice_EpName(devices[i]), g_ort->HardwareDevice_Vendor(hw),
           g_ort->HardwareDevice_VendorId(hw), g_ort->HardwareDevice_DeviceId(hw), TypeName(type));
    ++ours;
    if (type == OrtHardwareDeviceType_GPU && gpu == NULL) gpu = devices[i];
  }
  snprintf(text, sizeof text, "%s registered from %s, %zu device(s)", registration, argv[2], ours);
  Line("PASS", "register", text);
  if (gpu == NULL) {
    Line("SKIP", "device", ours == 0 ? "the factory offers no device here" : "none of its devices is a GPU");
  } else {
    snprintf(text, sizeof text, "GPU %s (vendor 0x%04x)", g_ort->HardwareDevice_Vendor(g_ort->EpDevice_Device(gpu)),
             g_ort->HardwareDevice_VendorId(g_ort->EpDevice_Device(gpu)));
    Line("PASS", "device", text);
  }
  if (argc >= 7 && gpu != NULL) {
    Begin("session");
    SessionStep(env, gpu, argv[4], atoi(argv[5]), atoi(argv[6]), argc - 7, argv + 7);
  } else if (argc >= 7) {
    Line("SKIP", "session", "no GPU device to run the model on");
  }
  if ((why = Failed(g_ort->UnregisterExecutionProviderLibrary(env, registration))) != NULL) {
    snprintf(text, sizeof text, "UnregisterExecutionProviderLibrary: %s", why);
    Line("FAIL", "unregister", text);
  }
  g_ort->ReleaseEnv(env);
  return g_failed;
}
