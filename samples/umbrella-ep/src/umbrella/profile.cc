#include "profile.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "ep_library.h"

namespace amdgpu_ep {
namespace {

std::string Trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

bool ResolveProfile(Profile* profile, std::string* error) {
  const std::string from_env = Trim(Env("AMDGPU_EP_PROFILE"));
  if (!from_env.empty()) {
    *profile = {Lower(from_env), "$AMDGPU_EP_PROFILE"};
    return true;
  }
  *profile = {"auto", "default"};
  const std::string conf = JoinPath(ThisLibraryDir(), "amdgpu-ep.conf");
  std::ifstream in(conf);
  if (!in) return true;  // no file: the default applies
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = Trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    const auto equals = text.find('=');
    const std::string key = equals == std::string::npos ? std::string() : Trim(text.substr(0, equals));
    const std::string value = equals == std::string::npos ? std::string() : Trim(text.substr(equals + 1));
    const std::string where = conf + ":" + std::to_string(number);
    if (key != "profile" || value.empty()) {
      *error = where + ": expected 'profile = <name>', found '" + text + "'; fix or remove the line";
      return false;
    }
    *profile = {Lower(value), where};
  }
  return true;
}

}  // namespace amdgpu_ep
