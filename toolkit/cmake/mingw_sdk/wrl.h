// Written by the ort-amdgpu toolkit: MinGW-w64's <wrl.h> without <wrl/implements.h>, which it does not carry;
// the toolkit's own takes its place (wrl/implements.h beside this file).
#pragma once
#include_next <wrl.h>
#include <wrl/implements.h>
