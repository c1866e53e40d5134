# Adds the hipified kernels in AMDGPU_EP_HIP_SOURCES_DIR to migraphx-backend. Included (not called as a
# function) because enable_language() must run at directory scope.
if(NOT IS_DIRECTORY "${AMDGPU_EP_HIP_SOURCES_DIR}")
  message(FATAL_ERROR "AMDGPU_EP_HIP_SOURCES_DIR=${AMDGPU_EP_HIP_SOURCES_DIR} is not a folder. "
                      "Point it at the hipify output, or set it empty to build without kernels.")
endif()
file(GLOB_RECURSE amdgpu_ep_hip_sources CONFIGURE_DEPENDS "${AMDGPU_EP_HIP_SOURCES_DIR}/*.hip")
if(NOT amdgpu_ep_hip_sources)
  message(FATAL_ERROR "AMDGPU_EP_HIP_SOURCES_DIR=${AMDGPU_EP_HIP_SOURCES_DIR} holds no *.hip files: "
                      "did the hipify stage run? Set it empty to build without kernels.")
endif()

include(CheckLanguage)
check_language(HIP)
if(NOT CMAKE_HIP_COMPILER)
  message(STATUS "amdgpu-ep: skipping the HIP kernels in ${AMDGPU_EP_HIP_SOURCES_DIR}: no HIP compiler found "
                 "(set CMAKE_HIP_COMPILER, CMAKE_HIP_PLATFORM=amd and HIP_PLATFORM=amd); "
                 "migraphx-backend is built without them")
  return()
endif()
if(NOT GPU_TARGETS)
  message(FATAL_ERROR "AMDGPU_EP_HIP_SOURCES_DIR is set but GPU_TARGETS is empty: "
                      "name the AMD GPU targets to compile the kernels for, e.g. -DGPU_TARGETS=gfx90a;gfx1030")
endif()
# Without this, enable_language(HIP) asks the (absent) GPU for its architecture.
set(CMAKE_HIP_ARCHITECTURES "${GPU_TARGETS}")
enable_language(HIP)

set_source_files_properties(${amdgpu_ep_hip_sources} PROPERTIES LANGUAGE HIP)
target_sources(migraphx-backend PRIVATE ${amdgpu_ep_hip_sources})
set_target_properties(migraphx-backend PROPERTIES HIP_ARCHITECTURES "${GPU_TARGETS}")
target_link_libraries(migraphx-backend PRIVATE amdhip64)
list(LENGTH amdgpu_ep_hip_sources amdgpu_ep_hip_count)
message(STATUS "amdgpu-ep: compiling ${amdgpu_ep_hip_count} HIP kernel source(s) into migraphx-backend for ${GPU_TARGETS}")
