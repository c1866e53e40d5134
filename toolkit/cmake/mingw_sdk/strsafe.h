// Written by the ort-amdgpu toolkit (toolkit/cmake/mingw_sdk): MinGW-w64's <strsafe.h>, with what code written
// for the Windows SDK's expects of it.
#pragma once

// MinGW-w64's tchar.h refuses to follow strsafe.h (the SDK's does not mind): read it first.
#include <tchar.h>
#include_next <strsafe.h>

#ifdef __cplusplus
// MinGW-w64 declares its functions extern "C" inline through STRSAFEAPI; WIL writes `static STRSAFEAPI` for copies
// of its own, which the SDK's spelling allows.
#undef STRSAFEAPI
#define STRSAFEAPI __inline HRESULT WINAPI
#endif

#ifndef STRSAFE_PCNZCH
typedef const char* STRSAFE_PCNZCH;
typedef const wchar_t* STRSAFE_PCNZWCH;
#endif
