"""The Windows SDK pieces the mingw toolchain adds (toolkit/cmake/mingw_sdk): a COM object built on the toolkit's WRL
RuntimeClass, compiled by the toolchain's clang exactly as CMake is told to (the flags of toolchain.cmake), and run
under Wine. QueryInterface answers every listed interface, a chain's members, and an interface listed beside one
derived from it; references count; WIL-style code finds the SDK names MinGW-w64 lacks."""

from __future__ import annotations

from pathlib import Path

from tests.support.windows_support import inside, windows_path
from toolkit.cmake.mingw import SDK_HEADERS, SDK_PRELUDE, cxx_search_folders, runtime_search_command
from toolkit.cmake.toolchain import resolve

PROGRAM = r"""
#include <windows.h>
#include <strsafe.h>
#include <wrl.h>
#include <cstdio>

struct __declspec(uuid("8f3b3c4e-0d8a-4a1e-9c51-000000000001")) IBase : IUnknown {
  virtual int STDMETHODCALLTYPE Base() = 0;
};
struct __declspec(uuid("8f3b3c4e-0d8a-4a1e-9c51-000000000002")) IDerived : IBase {
  virtual int STDMETHODCALLTYPE Derived() = 0;
};
struct __declspec(uuid("8f3b3c4e-0d8a-4a1e-9c51-000000000003")) IOther : IUnknown {
  virtual int STDMETHODCALLTYPE Other() = 0;
};
struct __declspec(uuid("8f3b3c4e-0d8a-4a1e-9c51-000000000004")) IMissing : IUnknown {};
// As the Windows SDK's headers and AMD's DirectX headers declare theirs (MinGW-w64's winnt.h would make it nothing).
interface DECLSPEC_UUID("8f3b3c4e-0d8a-4a1e-9c51-000000000005") IDeclared : IUnknown {
  virtual int STDMETHODCALLTYPE Declared() = 0;
};
// As MIDL-generated headers declare theirs (DirectX-Headers' d3d12.h); MinGW-w64's rpcndr.h drops the GUID.
MIDL_INTERFACE("8f3b3c4e-0d8a-4a1e-9c51-000000000006") IGenerated : public IUnknown {
  virtual int STDMETHODCALLTYPE Generated() = 0;
};

using namespace Microsoft::WRL;

class Plain : public RuntimeClass<RuntimeClassFlags<ClassicCom>, IDeclared, IGenerated> {
 public:
  int STDMETHODCALLTYPE Declared() override { return 5; }
  int STDMETHODCALLTYPE Generated() override { return 6; }
};

// IBase is listed beside IDerived, which derives from it (as the DirectX backend lists IMLOperatorAttributes).
class Object : public RuntimeClass<RuntimeClassFlags<ClassicCom>, ChainInterfaces<IDerived, IBase>, IOther, IBase> {
 public:
  explicit Object(int* alive) : alive_(alive) { ++*alive_; }
  ~Object() override { --*alive_; }
  int STDMETHODCALLTYPE Base() override { return 1; }
  int STDMETHODCALLTYPE Derived() override { return 2; }
  int STDMETHODCALLTYPE Other() override { return 3; }
 private:
  int* alive_;
};

int main() {
  int alive = 0;
  {
    ComPtr<Object> object = Make<Object>(&alive);
    ComPtr<IBase> base; ComPtr<IDerived> derived; ComPtr<IOther> other; ComPtr<IUnknown> unknown;
    ComPtr<IMissing> missing;
    HRESULT hrs[] = {object.As(&base), object.As(&derived), object.As(&other), object.As(&unknown),
                     object.As(&missing)};
    std::printf("base=%d derived=%d other=%d unknown=%d missing=%s\n", base->Base(), derived->Derived(),
                other->Other(), unknown != nullptr, hrs[4] == E_NOINTERFACE ? "E_NOINTERFACE" : "wrong");
    std::printf("all ok=%d alive=%d\n", SUCCEEDED(hrs[0]) && SUCCEEDED(hrs[1]) && SUCCEEDED(hrs[2]) &&
                SUCCEEDED(hrs[3]), alive);
    ComPtr<IUnknown> again;
    base.As(&again);
    std::printf("same identity=%d\n", again.Get() == unknown.Get());
  }
  {
    ComPtr<Plain> plain = Make<Plain>();
    ComPtr<IDeclared> declared;
    ComPtr<IGenerated> generated;
    std::printf("declared=%d uuid=%d\n", SUCCEEDED(plain.As(&declared)) ? declared->Declared() : -1,
                __uuidof(IDeclared).Data4[7]);
    std::printf("generated=%d uuid=%d\n", SUCCEEDED(plain.As(&generated)) ? generated->Generated() : -1,
                __uuidof(IGenerated).Data4[7]);
  }
  volatile LONG counter = 0;
  InterlockedIncrementNoFence(&counter);
  WriteRelease(&counter, ReadAcquire(&counter) + 1);
  STRSAFE_PCNZCH text = "strsafe";
  char copy[16];
  StringCchCopyA(copy, 16, text);
  std::printf("released alive=%d counter=%ld %s\n", alive, counter, copy);
  return 0;
}
"""


def test_a_com_object_on_the_toolkits_wrl_runs_under_wine(windows_root: Path, tmp_path: Path) -> None:
    pin = resolve("mingw").mingw
    assert pin is not None
    search = inside(windows_root, runtime_search_command(pin), [tmp_path])
    folders = cxx_search_folders(search.stderr)
    assert folders, search.stderr
    (tmp_path / "object.cc").write_text(PROGRAM)
    exe = tmp_path / "object.exe"
    cxx = [pin.program("CXX"), f"--target={pin.triplet}", "-nostdinc++", *(f"-isystem{f}" for f in folders),
           *pin.compile_flags, "-include", SDK_PRELUDE, "-isystem", str(SDK_HEADERS), "-O2", "-std=c++17",
           "-o", str(exe), str(tmp_path / "object.cc"), *pin.link_flags]
    built = inside(windows_root, cxx, [tmp_path, SDK_HEADERS])
    assert built.returncode == 0, built.stderr
    ran = inside(windows_root, ["wine", windows_path(exe)], [tmp_path],
                 env={"WINEDEBUG": "-all", "WINEPREFIX": str(tmp_path / "prefix")}, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.replace("\r", "").splitlines() == [
        "base=1 derived=2 other=3 unknown=1 missing=E_NOINTERFACE",
        "all ok=1 alive=1",
        "same identity=1",
        "declared=5 uuid=5",
        "generated=6 uuid=6",
        "released alive=0 counter=2 strsafe",
    ]
