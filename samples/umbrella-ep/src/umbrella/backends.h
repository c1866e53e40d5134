// The backends the umbrella can route to, in the order profile "auto" tries them.
#pragma once

#include <cstddef>

// CMake defines these to 1 for each backend it builds (see src/umbrella/CMakeLists.txt).
#ifndef AMDGPU_EP_WITH_MIGRAPHX
#error "AMDGPU_EP_WITH_MIGRAPHX must be defined by the build"
#endif
#ifndef AMDGPU_EP_WITH_HIPEP
#error "AMDGPU_EP_WITH_HIPEP must be defined by the build"
#endif
#ifndef AMDGPU_EP_WITH_DML
#error "AMDGPU_EP_WITH_DML must be defined by the build"
#endif

namespace amdgpu_ep {

struct Backend {
  const char* profile;  // the profile value that selects it
  const char* library;  // its shim's library name (LibraryFile() gives the file), looked for beside the umbrella
  const char* option;   // the CMake option that builds it, for the hint when it is missing
  bool built;           // whether this build of the umbrella includes it
};

inline constexpr Backend kBackends[] = {
    {"migraphx", "migraphx-backend", "USE_MIGRAPHX", AMDGPU_EP_WITH_MIGRAPHX != 0},
    {"hipep", "hipep-backend", "USE_HIPEP", AMDGPU_EP_WITH_HIPEP != 0},
    {"directx", "directx-backend", "USE_DML", AMDGPU_EP_WITH_DML != 0},
};

struct Alias {
  const char* name;
  const char* profile;
};

// "llm" is how the hipep PR exposed the HIP backend to users; existing configurations keep working.
inline constexpr Alias kAliases[] = {{"llm", "hipep"}};

}  // namespace amdgpu_ep
