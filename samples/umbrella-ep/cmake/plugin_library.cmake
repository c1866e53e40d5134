# amdgpu_ep_plugin_library(<name> <sources>...)
# A plugin EP library: a MODULE named lib<name>.so in AMDGPU_EP_OUTPUT_DIR that exports only
# CreateEpFactories and ReleaseEpFactory.
function(amdgpu_ep_plugin_library name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME ${name} LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/exports.map")
  target_link_libraries(${name} PRIVATE amdgpu-ep-common dl Threads::Threads)
  # --no-undefined: a MODULE would otherwise link with a missing symbol and fail only when ORT loads it.
  target_link_options(${name} PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/exports.map"
                      "LINKER:--no-undefined")
  install(TARGETS ${name} LIBRARY DESTINATION lib)
endfunction()

# amdgpu_ep_backend_shim(<name> ENV_VAR <var> DEFAULT_LIBRARY <file> DESCRIPTION <text>)
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
