// The few operating-system calls the loaders need, one implementation per platform (dynlib_posix.cc,
// dynlib_windows.cc), so ep_library.cc and the shims say what they do once for both.
#pragma once

#include <string>

namespace amdgpu_ep {

// Loads a library by full path, or returns nullptr and says why in *error. Its own dependencies are looked
// for beside it and in the system's folders, never in the working directory or on PATH (Windows), and its
// symbols stay out of the global namespace (POSIX: every plugin EP exports the same two names).
void* OpenLibrary(const std::string& path, std::string* error);
void* LibrarySymbol(void* handle, const char* name);
void CloseLibrary(void* handle);

// The folder of the library holding this code; backends and real EPs default to living beside it.
std::string ThisLibraryDir();
// `dir` and `file` joined with the platform's separator.
std::string JoinPath(const std::string& dir, const std::string& file);
// The file of a library named `name` on this platform: libNAME.so, or NAME.dll.
std::string LibraryFile(const std::string& name);
bool FileExists(const std::string& path);

}  // namespace amdgpu_ep
