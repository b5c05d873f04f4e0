# add_kglm_tool(NAME): bin/NAME.cpp linked against libkglm.
function(add_kglm_tool name)
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE kglm)
  target_compile_options(${name} PRIVATE ${KGLM_WARNINGS})
endfunction()

# add_kglm_test(NAME SOURCES... [LABELS l...]): a GoogleTest binary registered with CTest.
function(add_kglm_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE kglm GTest::gtest GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${KGLM_WARNINGS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    KGLM_FIXTURES_DIR="${KGLM_FIXTURES_DIR}" KGLM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KGLM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # NO_PRETTY_VALUES: parameterised tests keep their GoogleTest names ("./cuda"), without a dump
  # of the parameter appended.
  gtest_discover_tests(${name} NO_PRETTY_VALUES PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 60)
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
