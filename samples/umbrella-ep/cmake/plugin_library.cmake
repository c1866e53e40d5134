# amdgpu_ep_plugin_library(<name> <sources>...)
# A plugin EP library in AMDGPU_EP_OUTPUT_DIR (lib<name>.so, or <name>.dll on Windows) that exports only
# CreateEpFactories and ReleaseEpFactory.
function(amdgpu_ep_plugin_library name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME ${name})
  target_link_libraries(${name} PRIVATE amdgpu-ep-common Threads::Threads ${CMAKE_DL_LIBS})
  if(WIN32)
    # AMD's Windows libraries are named without MinGW's "lib" prefix (amdgpu-ep.dll). The C++ runtime,
    # libgcc and winpthreads are linked in: a plugin EP DLL must load in any process that has ORT, where no
    # MinGW runtime DLL is on the search path. Only the dllexport-marked entry points are exported.
    set_target_properties(${name} PROPERTIES PREFIX "")
    target_link_options(${name} PRIVATE -static "LINKER:--no-insert-timestamp")
    install(TARGETS ${name} LIBRARY DESTINATION bin)
  else()
    set_target_properties(${name} PROPERTIES LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/exports.map")
    # --no-undefined: a MODULE would otherwise link with a missing symbol and fail only when ORT loads it.
    target_link_options(${name} PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/exports.map"
                        "LINKER:--no-undefined")
    install(TARGETS ${name} LIBRARY DESTINATION lib)
  endif()
endfunction()

# amdgpu_ep_backend_shim(<name> ENV_VAR <var> DEFAULT_LIBRARY <library name> DESCRIPTION <text>)
# A backend shim: the pass-through in src/common/backend_shim.cc, parameterized for one backend.
function(amdgpu_ep_backend_shim name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "ENV_VAR;DEFAULT_LIBRARY;DESCRIPTION" "")
  if(NOT arg_ENV_VAR OR NOT arg_DEFAULT_LIBRARY OR NOT arg_DESCRIPTION OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "amdgpu_ep_backend_shim(${name}): needs ENV_VAR, DEFAULT_LIBRARY and DESCRIPTION")
  endif()
  amdgpu_ep_plugin_library(${name} "${PROJECT_SOURCE_DIR}/src/common/backend_shim.cc")
  target_compile_definitions(${name} PRIVATE
    AMDGPU_EP_BACKEND_NAME="${name}"
    AMDGPU_EP_BACKEND_ENV="${arg_ENV_VAR}"
    AMDGPU_EP_BACKEND_DEFAULT="${arg_DEFAULT_LIBRARY}"
    AMDGPU_EP_BACKEND_WHAT="${arg_DESCRIPTION}")
endfunction()
