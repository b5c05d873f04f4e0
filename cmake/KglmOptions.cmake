# Compiler flags for project code and the optional sanitizer / fuzzer builds.
set(KGLM_WARNINGS -Wall -Wextra -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Wrestrict positives inside std::string (GCC bug 105329).
  list(APPEND KGLM_WARNINGS -Wno-restrict)
endif()
# The precompiled headers (KGLM_PCH) serve unoptimised builds only (the sanitized build, -O0), where
# parsing is most of a file's compile time. GCC 12, reading std::string from a precompiled header, no
# longer takes its inlined code for a system header's, and its optimisers' warnings (-Warray-bounds,
# -Wstringop-overflow) fire there falsely, from -O1 up (seen in the library and the tests).
string(TOUPPER "${CMAKE_BUILD_TYPE}" _kglm_config)
# Other compilers (clang, of the fuzz build) compile without them: untried.
set(KGLM_OPTIMISED_BUILD OFF)
if("${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_kglm_config}}" MATCHES "-O[123sfz]")
  set(KGLM_OPTIMISED_BUILD ON)
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR KGLM_OPTIMISED_BUILD)
  set(KGLM_PCH OFF)
endif()
# A precompiled header that GCC cannot use (flags that differ from the ones it was built with) would
# be parsed again silently, file by file: make it an error.
if(KGLM_PCH)
  list(APPEND KGLM_WARNINGS -Winvalid-pch)
endif()

# simdjson's On-Demand API picks its SIMD kernel at compile time: without AVX2 it falls back to
# a scalar parser several times slower. The default targets Haswell (2013) and newer x86-64 CPUs;
# -DKGLM_ARCH=native tunes for the build machine, -DKGLM_ARCH= gives a portable, slower build.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(KGLM_ARCH haswell CACHE STRING "-march for all code (empty = compiler default)")
else()
  set(KGLM_ARCH "" CACHE STRING "-march for all code (empty = compiler default)")
endif()
# Host-compiler flags apply to C and C++ only: nvcc compiles the CUDA kernels with its own flags
# (lib/nn/cuda/sources.cmake).
if(KGLM_ARCH)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-march=${KGLM_ARCH}>)
endif()

if(KGLM_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
endif()
if(KGLM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KGLM_FUZZ=ON needs clang (configure with CXX=clang++-14 CC=clang-14)")
  endif()
  # The fuzz targets read files, not GPUs: the CUDA backend stays out of this build.
  set(KGLM_CUDA OFF CACHE STRING "CUDA backend: AUTO|ON|OFF" FORCE)
  # Instrument the library for coverage; the fuzz targets add -fsanitize=fuzzer at link.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# AUTO|ON|OFF detection of an optional component: sets KGLM_HAVE_<NAME>.
function(kglm_optional name found)
  set(mode ${KGLM_${name}})
  if(mode STREQUAL "OFF")
    set(KGLM_HAVE_${name} OFF PARENT_SCOPE)
  elseif(${found})
    set(KGLM_HAVE_${name} ON PARENT_SCOPE)
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "KGLM_${name}=ON but it was not found")
  else()
    set(KGLM_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

# The default GPU architectures: V100 (70), A100 (80) and H100 (90), each where the toolkit can
# build it. CUDA 13 dropped sm_70; then the oldest architecture it still builds (75) stands in for
# it, so the fp16 path without sm_80 features keeps being compiled.
function(kglm_default_cuda_archs out)
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch OUTPUT_VARIABLE _listed ERROR_QUIET
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    set(${out} "70;80;90" PARENT_SCOPE)  # older nvcc without --list-gpu-arch: all three exist there
    return()
  endif()
  string(REGEX MATCHALL "compute_[0-9]+" _archs "${_listed}")
  list(TRANSFORM _archs REPLACE "compute_" "")
  list(SORT _archs COMPARE NATURAL)
  set(_chosen "")
  foreach(_want 70 80 90)
    if(_want IN_LIST _archs)
      list(APPEND _chosen ${_want})
    elseif(_want EQUAL 70)
      list(GET _archs 0 _oldest)
      if(_oldest LESS 80)
        list(APPEND _chosen ${_oldest})
      endif()
    endif()
  endforeach()
  set(${out} "${_chosen}" PARENT_SCOPE)
endfunction()
