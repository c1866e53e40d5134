// Which backend profile the user asked for, and where that choice came from (for messages).
#pragma once

#include <string>

namespace amdgpu_ep {

struct Profile {
  std::string value;   // lower-cased, trimmed: "auto", "migraphx", ...
  std::string source;  // "$AMDGPU_EP_PROFILE", "/path/amdgpu-ep.conf:3" or "default"
};

// $AMDGPU_EP_PROFILE, else `profile = ...` in amdgpu-ep.conf beside the umbrella library, else "auto".
// Returns false, after a line on stderr naming the file and line, when the config file is malformed.
bool ResolveProfile(Profile* profile);

}  // namespace amdgpu_ep
