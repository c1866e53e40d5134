# The toolkit's CMake dependency provider, injected with -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<this file>.
#
# CMake calls it for every FetchContent_MakeAvailable and find_package it actually evaluates (nested ones
# included: a dependency's own FetchContent_MakeAvailable asks it too), so only what the configure really
# reaches is served, whatever if() it sits under. The toolkit writes TOOLKIT_PROVIDER_MAP, a .cmake file that
# sets, for every dependency the recipe lists:
#   TOOLKIT_FC_DIR_<lowercase name>   verified source folder (content digest checked before the configure)
# and TOOLKIT_FC_NAMES (every name listed), TOOLKIT_FP_NAMES (names whose find_package must not find a system
# copy), TOOLKIT_PROVIDER_RECIPE (the recipe file, for the error); TOOLKIT_PROVIDER_REPORT is where each request
# is written, one "<method> <name>" line per request.
# A FetchContent name the map lacks stops the configure: CMake would otherwise download it unverified.
#
# Survey mode (TOOLKIT_PROVIDER_SURVEY names a file; `python -m toolkit survey`, which `bump` runs): each
# FetchContent request is also written there with what the tree declared for it (CMake hands the provider
# FetchContent_Declare's arguments after the name: URL, GIT_REPOSITORY, GIT_TAG, ...), one line per request:
# "<name>\t<served|stub>\t<argument>\t<argument>...". A name the map lacks gets an empty stand-in folder
# instead of stopping the configure, so one configure of a new revision lists every dependency it declares.

if(NOT DEFINED TOOLKIT_PROVIDER_MAP)
  message(FATAL_ERROR "toolkit provider: TOOLKIT_PROVIDER_MAP is not set (the toolkit passes it with the provider)")
endif()
include("${TOOLKIT_PROVIDER_MAP}")
include(FetchContent)
file(WRITE "${TOOLKIT_PROVIDER_REPORT}" "")
if(DEFINED TOOLKIT_PROVIDER_SURVEY AND NOT "${TOOLKIT_PROVIDER_SURVEY}" STREQUAL "")
  file(WRITE "${TOOLKIT_PROVIDER_SURVEY}" "")
endif()
# A folder FetchContent cached in an earlier configure would be taken without asking the provider.
foreach(_toolkit_name IN LISTS TOOLKIT_FC_NAMES)
  string(TOUPPER "${_toolkit_name}" _toolkit_uc)
  unset(FETCHCONTENT_SOURCE_DIR_${_toolkit_uc} CACHE)
endforeach()
# A pinned dependency a tree looks for with find_package first (protobuf's find_package(absl CONFIG)): that
# search is disabled (CMake's own switch), so the tree takes its FetchContent path, which this provider serves
# from the pin; a system copy of another version (Debian's libabsl-dev) is never used.
foreach(_toolkit_name IN LISTS TOOLKIT_FP_NAMES)
  set(CMAKE_DISABLE_FIND_PACKAGE_${_toolkit_name} TRUE)
endforeach()

# Nothing is downloaded, even for a dependency served here (its own nested declarations included).
set(FETCHCONTENT_FULLY_DISCONNECTED ON CACHE BOOL "toolkit: every FetchContent dependency is served locally" FORCE)

# Hands the verified folder to the built-in implementation; the nested call for the same name is not routed
# back to the provider (CMake's rule). A function, not inline in the macro: FetchContent_MakeAvailable is a
# macro that unsets its own variables when done, which in the caller's scope would make the rest of a
# multi-name FetchContent_MakeAvailable(a b c) skip the provider. FetchContent_GetProperties in the caller
# then sets <name>_SOURCE_DIR and friends where the tree expects them.
function(_toolkit_make_available name folder)
  string(TOUPPER "${name}" upper)
  set(FETCHCONTENT_SOURCE_DIR_${upper} "${folder}")
  FetchContent_MakeAvailable(${name})
  # FetchContent caches the folder; left there, the next configure would take it without asking the
  # provider (neither verified nor reported).
  unset(FETCHCONTENT_SOURCE_DIR_${upper} CACHE)
endfunction()

# A name whose find_package the pinned source answers (TOOLKIT_FP_SERVED): declared here with OVERRIDE_FIND_PACKAGE
# (the first declaration of a name wins, so the tree's own later one is ignored) and made available, so
# find_package reads the config FetchContent writes for it instead of searching the system.
function(_toolkit_serve_find_package name)
  string(TOLOWER "${name}" lc)
  FetchContent_GetProperties(${name})
  if(NOT ${lc}_POPULATED)
    FetchContent_Declare(${name} SOURCE_DIR "${TOOLKIT_FC_DIR_${lc}}" OVERRIDE_FIND_PACKAGE)
    _toolkit_make_available("${name}" "${TOOLKIT_FC_DIR_${lc}}")
  endif()
endfunction()

# Survey mode: record the request with its declared details; serve a name the map lacks from an empty
# stand-in folder (its targets are missing, which the configure reports after every request was seen).
function(_toolkit_survey name)
  string(TOLOWER "${name}" lc)
  set(state served)
  if(NOT DEFINED TOOLKIT_FC_DIR_${lc})
    set(state stub)
    set(stub "${CMAKE_BINARY_DIR}/_toolkit_survey_stubs/${lc}")
    file(WRITE "${stub}/CMakeLists.txt" "# toolkit survey: '${name}' is not in the recipe; an empty stand-in\n")
    _toolkit_make_available("${name}" "${stub}")
  endif()
  set(details ${ARGN})
  list(JOIN details "\t" joined)
  file(APPEND "${TOOLKIT_PROVIDER_SURVEY}" "${lc}\t${state}\t${joined}\n")
endfunction()

macro(toolkit_provide_dependency method name)
  if("${method}" STREQUAL "FETCHCONTENT_MAKEAVAILABLE_SERIAL")
    string(TOLOWER "${name}" _toolkit_lc)
    string(TOUPPER "${name}" _toolkit_uc)
    file(APPEND "${TOOLKIT_PROVIDER_REPORT}" "fetchcontent ${_toolkit_lc}\n")
    if(DEFINED TOOLKIT_PROVIDER_SURVEY AND NOT "${TOOLKIT_PROVIDER_SURVEY}" STREQUAL "")
      _toolkit_survey("${name}" ${ARGN})
    elseif(NOT DEFINED TOOLKIT_FC_DIR_${_toolkit_lc})
      file(RELATIVE_PATH _toolkit_where "${CMAKE_SOURCE_DIR}" "${CMAKE_CURRENT_LIST_FILE}")
      message(FATAL_ERROR
        "toolkit: FetchContent dependency '${name}' (asked for by ${_toolkit_where}) is not listed in "
        "${TOOLKIT_PROVIDER_RECIPE}; add\n  [[fetchcontent]]\n  name = \"${_toolkit_lc}\"\n  url = \"<archive URL>\"\n"
        "to ${TOOLKIT_PROVIDER_RECIPE}, then run `nox -s lock` to pin it. CMake downloads nothing here.")
    endif()
    if(DEFINED TOOLKIT_FC_DIR_${_toolkit_lc})
      _toolkit_make_available("${name}" "${TOOLKIT_FC_DIR_${_toolkit_lc}}")
    endif()
  elseif("${method}" STREQUAL "FIND_PACKAGE")
    file(APPEND "${TOOLKIT_PROVIDER_REPORT}" "find_package ${name}\n")
    if("${name}" IN_LIST TOOLKIT_FP_SERVED)
      _toolkit_serve_find_package("${name}")
    endif()
    # System packages (ORT, HIP, MIGraphX from the build root) are found as usual; only recorded. A served name
    # is found through the config FetchContent wrote for it.
    find_package(${name} ${ARGN} BYPASS_PROVIDER)
  endif()
endmacro()

cmake_language(SET_DEPENDENCY_PROVIDER toolkit_provide_dependency
               SUPPORTED_METHODS FETCHCONTENT_MAKEAVAILABLE_SERIAL FIND_PACKAGE)
