#include <dlfcn.h>
#include <sys/stat.h>

#include "dynlib.h"

namespace amdgpu_ep {

void* OpenLibrary(const std::string& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = why != nullptr ? why : "unknown dlopen error";
  }
  return handle;
}

void* LibrarySymbol(void* handle, const char* name) { return dlsym(handle, name); }

void CloseLibrary(void* handle) { dlclose(handle); }

std::string ThisLibraryDir() {
  Dl_info info{};
  // Any address inside this library identifies it; dladdr then gives the path it was loaded from.
  if (dladdr(reinterpret_cast<void*>(&ThisLibraryDir), &info) == 0 || info.dli_fname == nullptr) return ".";
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, const std::string& file) { return dir + "/" + file; }

std::string LibraryFile(const std::string& name) { return "lib" + name + ".so"; }

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace amdgpu_ep
