// Written by the ort-amdgpu toolkit: the part of WRL's <wrl/implements.h> that AMD's DirectX backend uses
// (classic COM only), for MinGW-w64, whose headers carry <wrl/client.h> (ComPtr) but not this file.
//
//   RuntimeClass<RuntimeClassFlags<ClassicCom>, I1, ChainInterfaces<A, B, ...>, I2, ...>
//   Make<T>(args...) -> ComPtr<T>
//
// An object starts with one reference, which Make hands to the ComPtr it returns; QueryInterface answers
// IUnknown and every interface listed, a chain answering for each of its members (A derives from B ...).
#pragma once

#include <atomic>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unknwn.h>
#include <wrl/client.h>

namespace Microsoft {
namespace WRL {

enum RuntimeClassType { WinRt = 0x1, ClassicCom = 0x2, WinRtClassicComMix = 0x3, InhibitWeakReference = 0x4 };

template <unsigned int flags>
struct RuntimeClassFlags {
  static constexpr unsigned int value = flags;
};

// The class derives from the first member only; the others are its bases, reached by QueryInterface.
template <typename First, typename... Rest>
struct ChainInterfaces : First {};

namespace Details {

template <typename I>
struct InterfaceList {
  using Base = I;
  static bool Find(REFIID riid) { return riid == __uuidof(I); }
};

template <typename First, typename... Rest>
struct InterfaceList<ChainInterfaces<First, Rest...>> {
  using Base = ChainInterfaces<First, Rest...>;
  static bool Find(REFIID riid) { return riid == __uuidof(First) || ((riid == __uuidof(Rest)) || ...); }
};

// Each listed interface is held by a base of its own, so that an interface listed beside one derived from it
// (IMLOperatorAttributes and IMLOperatorAttributes1) is reached through the entry that names it, never ambiguously.
template <typename Entry>
struct Holder : Entry {};

template <typename Self, typename I, typename... Is>
void* CastTo(Self* self, REFIID riid) {
  using List = InterfaceList<I>;
  if (List::Find(riid)) {
    return static_cast<typename List::Base*>(static_cast<Holder<typename List::Base>*>(self));
  }
  if constexpr (sizeof...(Is) > 0) {
    return CastTo<Self, Is...>(self, riid);
  } else {
    return nullptr;
  }
}

}  // namespace Details

template <typename Flags, typename... Interfaces>
class RuntimeClass : public Details::Holder<typename Details::InterfaceList<Interfaces>::Base>... {
  static_assert(Flags::value & ClassicCom, "only classic COM objects are implemented here");
  static_assert(sizeof...(Interfaces) > 0, "a RuntimeClass implements at least one interface");

  using Primary = typename Details::InterfaceList<std::tuple_element_t<0, std::tuple<Interfaces...>>>::Base;

 public:
  RuntimeClass() = default;
  RuntimeClass(const RuntimeClass&) = delete;
  RuntimeClass& operator=(const RuntimeClass&) = delete;

  STDMETHOD(QueryInterface)(REFIID riid, void** object) override {
    if (object == nullptr) {
      return E_POINTER;
    }
    void* found = riid == __uuidof(IUnknown)
                      ? static_cast<IUnknown*>(static_cast<Primary*>(static_cast<Details::Holder<Primary>*>(this)))
                      : Details::CastTo<RuntimeClass, Interfaces...>(this, riid);
    *object = found;
    if (found == nullptr) {
      return E_NOINTERFACE;
    }
    AddRef();
    return S_OK;
  }

  STDMETHOD_(ULONG, AddRef)() override { return ++references_; }

  STDMETHOD_(ULONG, Release)() override {
    ULONG left = --references_;
    if (left == 0) {
      delete this;
    }
    return left;
  }

 protected:
  virtual ~RuntimeClass() = default;

 private:
  std::atomic<ULONG> references_{1};
};

namespace Details {
template <typename T>
constexpr T&& Forward(std::remove_reference_t<T>& value) noexcept {
  return static_cast<T&&>(value);
}
}  // namespace Details

// WIL names these in templates the backend never instantiates (agile callbacks, module references): declared
// so that WIL's headers parse; a WRL module is never created here, so GetModuleBase() has none to return.
class FtmBase;
template <typename... Interfaces>
class Implements;
template <typename Delegate, typename... Args>
ComPtr<Delegate> Callback(Args&&... args);

class ModuleBase {
 public:
  virtual unsigned long IncrementObjectCount() = 0;
  virtual unsigned long DecrementObjectCount() = 0;

 protected:
  virtual ~ModuleBase() = default;
};

inline ModuleBase* GetModuleBase() noexcept { return nullptr; }

template <typename T, typename... Args>
ComPtr<T> Make(Args&&... args) {
  ComPtr<T> object;
  object.Attach(new (std::nothrow) T(std::forward<Args>(args)...));
  return object;
}

}  // namespace WRL
}  // namespace Microsoft

namespace Microsoft {
namespace WRL {

// Two-phase construction: the object's RuntimeClassInitialize(args...) decides whether it is handed out.
template <typename T, typename I, typename... Args>
HRESULT MakeAndInitialize(I** result, Args&&... args) {
  *result = nullptr;
  ComPtr<T> object = Make<T>();
  if (!object) {
    return E_OUTOFMEMORY;
  }
  HRESULT hr = object->RuntimeClassInitialize(std::forward<Args>(args)...);
  if (FAILED(hr)) {
    return hr;
  }
  return object.CopyTo(result);
}

}  // namespace WRL
}  // namespace Microsoft
