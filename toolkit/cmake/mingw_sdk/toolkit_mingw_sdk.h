// Written by the ort-amdgpu toolkit (toolkit/cmake/mingw_sdk): what code written against Microsoft's Windows SDK
// finds there and MinGW-w64's headers lack or spell otherwise. The mingw toolchain force-includes this file
// (-include) in every C++ unit; it reads guiddef.h, and ORT's C API header where the unit can see it.
#pragma once

// MinGW-w64's winnt.h defines DECLSPEC_UUID(x) as nothing unless it is defined already, so an interface declared
// `interface DECLSPEC_UUID("...") IFoo` (as the Windows SDK's and AMD's DirectX headers declare theirs) would carry
// no GUID, and __uuidof of it would not compile. Here it is the __declspec the SDK's winnt.h gives it.
#ifndef DECLSPEC_UUID
#define DECLSPEC_UUID(x) __declspec(uuid(x))
#endif

#ifdef __cplusplus
// MinGW-w64 spells __uuidof(T) as __mingw_uuidof<T>(), defined only for the interfaces its headers name with
// __CRT_UUID_DECL; one declared `struct __declspec(uuid("...")) IFoo` (as COM code written for MSVC declares its
// own) would be an undefined reference. Its primary template answers with clang's own __uuidof, which reads that
// __declspec (-fms-extensions).
#include <guiddef.h>
#pragma push_macro("__uuidof")
#undef __uuidof
extern "C++" {
#if __cpp_constexpr >= 200704l && __cpp_inline_variables >= 201606L
template <typename T>
constexpr const GUID& __mingw_uuidof() {
  return __uuidof(T);
}
#else
template <typename T>
const GUID& __mingw_uuidof() {
  return __uuidof(T);
}
#endif
}
#pragma pop_macro("__uuidof")
#endif

// ORT's C API header defines the SAL annotations it uses for every compiler but MSVC, _In_reads_opt_ as an
// object-like macro where sal.h has a function-like one that DirectX's headers call with an argument. Read ORT's
// header first, then give the annotation sal.h's form, which ORT's header (guarded) does not redefine again.
#if defined(__cplusplus) && __has_include(<onnxruntime_c_api.h>)
#include <onnxruntime_c_api.h>
#undef _In_reads_opt_
#define _In_reads_opt_(s)
#endif

// winnt.h's fence-free interlocked operations and acquire/release accessors, which MinGW-w64's winnt.h lacks
// (x64: an interlocked operation is a full fence; these may be stronger than asked, never weaker).
#ifndef InterlockedIncrementNoFence
#define InterlockedIncrementNoFence InterlockedIncrement
#define InterlockedDecrementNoFence InterlockedDecrement
#define InterlockedExchangeNoFence InterlockedExchange
#endif
#ifndef ReadAcquire
#define ReadAcquire(source) __atomic_load_n((source), __ATOMIC_ACQUIRE)
#define WriteRelease(destination, value) __atomic_store_n((destination), (value), __ATOMIC_RELEASE)
#endif
