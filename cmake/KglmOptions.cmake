# Compiler flags for project code and the optional sanitizer / fuzzer builds.
set(KGLM_WARNINGS -Wall -Wextra -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Wrestrict positives inside std::string (GCC bug 105329).
  list(APPEND KGLM_WARNINGS -Wno-restrict)
endif()

# simdjson's On-Demand API picks its SIMD kernel at compile time: without AVX2 it falls back to
# a scalar parser several times slower. The default targets Haswell (2013) and newer x86-64 CPUs;
# -DKGLM_ARCH=native tunes for the build machine, -DKGLM_ARCH= gives a portable, slower build.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(KGLM_ARCH haswell CACHE STRING "-march for all code (empty = compiler default)")
else()
  set(KGLM_ARCH "" CACHE STRING "-march for all code (empty = compiler default)")
endif()
if(KGLM_ARCH)
  add_compile_options(-march=${KGLM_ARCH})
endif()

if(KGLM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(KGLM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KGLM_FUZZ=ON needs clang (configure with CXX=clang++-14 CC=clang-14)")
  endif()
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
