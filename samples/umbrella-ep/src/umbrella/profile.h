// Which backend profile the user asked for, and where that choice came from (for messages).
#pragma once

#include <string>

namespace amdgpu_ep {

struct Profile {
  std::string value;   // lower-cased, trimmed: "auto", "migraphx", ...
  std::string source;  // "$AMDGPU_EP_PROFILE", "/path/amdgpu-ep.conf:3" or "default"
};

// The default profile of sessions that set none: $AMDGPU_EP_PROFILE, else `profile = ...` in amdgpu-ep.conf
// beside the umbrella library, else "auto". Returns false, with *error naming the file and line, when the
// config file is malformed.
bool ResolveProfile(Profile* profile, std::string* error);

}  // namespace amdgpu_ep
