# The standard headers most of the tree includes, parsed once per build instead of once per file
# (1.7 s of CPU per file at -O0 under GCC 12, over 8 files measured): the library's precompiled header and the tests'
# (with GoogleTest's header), in unoptimised builds (cmake/KglmOptions.cmake). The ten tools, one
# file each and built with other definitions than the library, parse their headers themselves.
# KGLM_PCH=OFF builds without any (each file then proves that it includes what it uses).
set(KGLM_PCH_HEADERS <algorithm> <array> <chrono> <cmath> <cstdint> <cstdio> <cstring> <filesystem>
    <fstream> <functional> <map> <memory> <mutex> <optional> <span> <sstream> <string> <string_view>
    <unordered_map> <utility> <vector>)
function(kglm_precompile_headers target)
  if(KGLM_PCH)
    set(headers ${KGLM_PCH_HEADERS} ${ARGN})
    list(TRANSFORM headers REPLACE "(.+)" "$<$<COMPILE_LANGUAGE:CXX>:\\1>")  # not for nvcc
    target_precompile_headers(${target} PRIVATE ${headers})
  endif()
endfunction()

# add_kglm_tool(NAME): bin/NAME.cpp linked against libkglm.
function(add_kglm_tool name)
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE kglm)
  target_compile_options(${name} PRIVATE ${KGLM_WARNINGS})
endfunction()

# kglm_test_compile_settings(TARGET): what a GoogleTest binary compiles with; also the tests'
# precompiled header's target (tests/CMakeLists.txt), which must match it.
function(kglm_test_compile_settings target)
  target_link_libraries(${target} PRIVATE kglm GTest::gtest)
  target_compile_options(${target} PRIVATE ${KGLM_WARNINGS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # The tests' own code at -O1 in an optimised build (the library they test keeps the build's -O):
  # the 47 test files took 179 s of CPU at -O3 and 129 s at -O1 (measured), and run for seconds.
  if(KGLM_OPTIMISED_BUILD)
    target_compile_options(${target} PRIVATE -O1)
  endif()
  target_compile_definitions(${target} PRIVATE
    KGLM_FIXTURES_DIR="${KGLM_FIXTURES_DIR}" KGLM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KGLM_BINARY_DIR="${PROJECT_BINARY_DIR}")
endfunction()

# add_kglm_test(NAME SOURCES... [LABELS l...]): a GoogleTest binary registered with CTest.
function(add_kglm_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest_main)
  kglm_test_compile_settings(${name})
  if(KGLM_PCH)
    target_precompile_headers(${name} REUSE_FROM kglm_test_pch)
  endif()
  # NO_PRETTY_VALUES: parameterised tests keep their GoogleTest names ("./cuda"), without a dump
  # of the parameter appended. A binary without labels is labelled `unit` (make check); one label at
  # most (gtest_discover_tests' PROPERTIES are pairs: a list would be split). Every case gets its
  # binary's TIMEOUT from tests/budget.cmake (the slowest case's measured time, times 3).
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  kglm_test_timeout(${name} timeout)
  gtest_discover_tests(${name} NO_PRETTY_VALUES PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${timeout}
                       ENVIRONMENT OMP_NUM_THREADS=1 DISCOVERY_TIMEOUT 60)
endfunction()

# kglm_test_seconds(NAME OUT): a test's (or a GoogleTest binary's slowest case's) measured wall
# seconds (rounded up) in this build's pass from KGLM_TEST_BUDGET (tests/budget.cmake): the `make test` column,
# or the sanitized one in a KGLM_SANITIZE build ("-" there: not in that pass, the first column
# stands). Fails the configuration for a test without an entry: every test has a budget.
function(kglm_test_seconds name out)
  list(FIND KGLM_TEST_BUDGET ${name} at)
  if(at EQUAL -1)
    message(FATAL_ERROR "test ${name} has no time budget: measure it and add it to tests/budget.cmake")
  endif()
  math(EXPR column "${at} + 1")
  list(GET KGLM_TEST_BUDGET ${column} seconds)
  if(KGLM_SANITIZE)
    math(EXPR column "${at} + 2")
    list(GET KGLM_TEST_BUDGET ${column} sanitized)
    if(NOT sanitized STREQUAL "-")
      set(seconds ${sanitized})
    endif()
  endif()
  set(${out} ${seconds} PARENT_SCOPE)
endfunction()

# kglm_test_timeout(NAME OUT): 3 x the measured seconds, rounded up, at least KGLM_TIMEOUT_FLOOR.
function(kglm_test_timeout name out)
  kglm_test_seconds(${name} seconds)
  math(EXPR timeout "${seconds} * 3")
  if(timeout LESS KGLM_TIMEOUT_FLOOR)
    set(timeout ${KGLM_TIMEOUT_FLOOR})
  endif()
  set(${out} ${timeout} PARENT_SCOPE)
endfunction()

# kglm_apply_test_budgets(): every test of the calling directory gets TIMEOUT (above), COST (its
# measured seconds: ctest starts the longest first, whatever the history of the build directory)
# and OMP_NUM_THREADS = its PROCESSORS (1 unless set), the tools' default --threads (man 7 kglm).
function(kglm_apply_test_budgets)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    kglm_test_seconds(${test} seconds)
    kglm_test_timeout(${test} timeout)
    get_test_property(${test} PROCESSORS processors)
    if(NOT processors)
      set(processors 1)
    endif()
    set_tests_properties(${test} PROPERTIES TIMEOUT ${timeout} COST ${seconds})
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "OMP_NUM_THREADS=${processors}")
  endforeach()
endfunction()

function(kglm_print_summary)
  message(STATUS "")
  message(STATUS "kglm ${PROJECT_VERSION} configuration")
  message(STATUS "  build type     : ${CMAKE_BUILD_TYPE}")
  message(STATUS "  compiler       : ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  message(STATUS "  HDF5           : ${HDF5_VERSION}")
  message(STATUS "  simdjson       : ${SIMDJSON_VERSION}")
  message(STATUS "  ICU            : ${ICU_VERSION}")
  message(STATUS "  Boost          : ${Boost_VERSION}")
  message(STATUS "  zstd           : ${ZSTD_VERSION}")
  message(STATUS "  KGLM_CUDA=${KGLM_CUDA} -> ${KGLM_HAVE_CUDA} ${CMAKE_CUDA_COMPILER} ${KGLM_CUDA_ARCHS}")
  message(STATUS "  KGLM_MPI=${KGLM_MPI} -> ${KGLM_HAVE_MPI}")
  message(STATUS "  KGLM_NCCL=${KGLM_NCCL} -> ${KGLM_HAVE_NCCL}")
  message(STATUS "  -march         : ${KGLM_ARCH}")
  message(STATUS "  sanitizers     : ${KGLM_SANITIZE}")
  message(STATUS "  fuzz targets   : ${KGLM_FUZZ}")
  message(STATUS "  fixtures       : ${KGLM_FIXTURES_DIR}")
  message(STATUS "")
endfunction()
