# ops tests: finite-difference gradient checks, F32/F64 agreement and op semantics. CTest names
# them by their GoogleTest names (Ops*.*); the label selects them all: ctest -L nn_ops.
add_kglm_test(nn_ops_test SOURCES nn/ops_test.cpp nn/recurrent_ops_test.cpp nn/parser_ops_test.cpp nn/cpu_gemm_test.cpp
              LABELS nn_ops)

# Hand-run micro benchmark of one encoder layer's ops (not a test; compare with ops_microbench.py).
add_executable(nn_ops_microbench nn/ops_microbench.cpp)
target_link_libraries(nn_ops_microbench PRIVATE kglm)
target_compile_options(nn_ops_microbench PRIVATE ${KGLM_WARNINGS})

# Hand-run micro benchmark of the fp32 products in oneDNN and OpenBLAS (linear_cpu.cpp's choice).
add_executable(nn_gemm_microbench nn/gemm_microbench.cpp)
target_link_libraries(nn_gemm_microbench PRIVATE kglm)
target_compile_options(nn_gemm_microbench PRIVATE ${KGLM_WARNINGS})
