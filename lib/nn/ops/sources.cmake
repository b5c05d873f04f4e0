# Op dispatch files (nn/ops/*.cpp) and CPU kernels (nn/cpu/*.cpp), relative to lib/.
set(KGLM_NN_OPS_SOURCES
  nn/ops/activation.cpp
  nn/ops/adagrad.cpp
  nn/ops/adamw.cpp
  nn/ops/attention.cpp
  nn/ops/biased_attention.cpp
  nn/ops/block_scores.cpp
  nn/ops/char_convolution.cpp
  nn/ops/cross_entropy.cpp
  nn/ops/dropout.cpp
  nn/ops/elementwise.cpp
  nn/ops/embedding.cpp
  nn/ops/highway.cpp
  nn/ops/layer_norm.cpp
  nn/ops/linear.cpp
  nn/ops/lstm.cpp
  nn/ops/op_times.cpp
  nn/ops/outer_product.cpp
  nn/ops/rms_norm.cpp
  nn/ops/sampled_softmax.cpp
  nn/ops/scalar_mix.cpp
  nn/ops/segment_pool.cpp
  nn/ops/soft_align.cpp
  nn/cpu/activation_cpu.cpp
  nn/cpu/adagrad_cpu.cpp
  nn/cpu/adamw_cpu.cpp
  nn/cpu/attention_cpu.cpp
  nn/cpu/biased_attention_cpu.cpp
  nn/cpu/block_scores_cpu.cpp
  nn/cpu/char_convolution_cpu.cpp
  nn/cpu/cross_entropy_cpu.cpp
  nn/cpu/dropout_cpu.cpp
  nn/cpu/elementwise_cpu.cpp
  nn/cpu/embedding_cpu.cpp
  nn/cpu/gemm_bf16_cpu.cpp
  nn/cpu/highway_cpu.cpp
  nn/cpu/layer_norm_cpu.cpp
  nn/cpu/linear_cpu.cpp
  nn/cpu/lstm_cpu.cpp
  nn/cpu/outer_product_cpu.cpp
  nn/cpu/rms_norm_cpu.cpp
  nn/cpu/sampled_softmax_cpu.cpp
  nn/cpu/scalar_mix_cpu.cpp
  nn/cpu/segment_pool_cpu.cpp
  nn/cpu/soft_align_cpu.cpp
)
# The CPU kernels never read floating-point exception flags or errno. Without these two flags GCC
# must keep branches around clamps and selects (and errno checks around sqrt), which stops it
# vectorising loops such as the softmax's exp; results are unchanged (nothing is reassociated).
set(_kglm_kernel_flags -fno-trapping-math -fno-math-errno)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # clang reports "loop not vectorized" for `omp simd` loops it leaves scalar (e.g. under the
  # sanitizers of the fuzz build); that is a missed optimisation, not an error.
  list(APPEND _kglm_kernel_flags -Wno-pass-failed)
endif()
set_source_files_properties(
  nn/cpu/activation_cpu.cpp nn/cpu/adagrad_cpu.cpp nn/cpu/adamw_cpu.cpp nn/cpu/attention_cpu.cpp
  nn/cpu/biased_attention_cpu.cpp nn/cpu/block_scores_cpu.cpp nn/cpu/outer_product_cpu.cpp nn/cpu/scalar_mix_cpu.cpp
  nn/cpu/segment_pool_cpu.cpp nn/cpu/soft_align_cpu.cpp nn/cpu/char_convolution_cpu.cpp nn/cpu/cross_entropy_cpu.cpp nn/cpu/dropout_cpu.cpp nn/cpu/elementwise_cpu.cpp
  nn/cpu/embedding_cpu.cpp nn/cpu/highway_cpu.cpp nn/cpu/layer_norm_cpu.cpp nn/cpu/linear_cpu.cpp nn/cpu/lstm_cpu.cpp
  nn/cpu/rms_norm_cpu.cpp nn/cpu/sampled_softmax_cpu.cpp
  # Their own math flags would make the library's precompiled header unusable (-Winvalid-pch).
  PROPERTIES COMPILE_OPTIONS "${_kglm_kernel_flags}" SKIP_PRECOMPILE_HEADERS ON)
