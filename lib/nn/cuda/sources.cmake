# The CUDA backend, relative to lib/: the runtime (context, caching allocator, copies) and one
# kernel file per op, mirroring nn/cpu/. Without nvcc the build gets runtime_none.cpp, which says
# there is no GPU, and the op dispatch files reject device tensors.
if(KGLM_HAVE_CUDA)
  set(KGLM_NN_CUDA_SOURCES
    nn/cuda/allocator.cpp
    nn/cuda/context.cpp
    nn/cuda/gemm.cpp
    nn/cuda/runtime.cpp
    nn/cuda/indices_cuda.cu
    nn/cuda/activation_cuda.cu
    nn/cuda/adagrad_cuda.cu
    nn/cuda/adamw_cuda.cu
    nn/cuda/attention_cuda.cu
    nn/cuda/biased_attention_cuda.cu
    nn/cuda/block_scores_cuda.cu
    nn/cuda/char_convolution_cuda.cu
    nn/cuda/cross_entropy_cuda.cu
    nn/cuda/dropout_cuda.cu
    nn/cuda/elementwise_cuda.cu
    nn/cuda/embedding_cuda.cu
    nn/cuda/highway_cuda.cu
    nn/cuda/layer_norm_cuda.cu
    nn/cuda/linear_cuda.cu
    nn/cuda/lstm_cuda.cu
    nn/cuda/outer_product_cuda.cu
    nn/cuda/rms_norm_cuda.cu
    nn/cuda/sampled_softmax_cuda.cu
    nn/cuda/scalar_mix_cuda.cu
    nn/cuda/segment_pool_cuda.cu
    nn/cuda/soft_align_cuda.cu
  )
else()
  set(KGLM_NN_CUDA_SOURCES nn/cuda/runtime_none.cpp)
endif()

# Links the backend into `target` and sets nvcc's flags for its kernels.
function(kglm_link_cuda target)
  if(NOT KGLM_HAVE_CUDA)
    return()
  endif()
  target_compile_definitions(${target} PRIVATE KGLM_WITH_CUDA=1)
  target_link_libraries(${target} PUBLIC CUDA::cudart CUDA::cublasLt CUDA::cublas)  # cublas: status names
  # Warnings are errors in device and host code alike; no fast-math: the kernels must agree with
  # the CPU's (exact erf, IEEE division).
  if(CMAKE_CUDA_COMPILER_ID STREQUAL "Clang")
    # clang compiles CUDA itself (the CUDA 12 toolchain of cmake/cuda12.sh, whose wheels carry no
    # nvcc): one set of warnings for host and device code; constexpr functions are callable on the
    # device by default; a CUDA newer than clang knows is used as the newest it knows.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Wall -Wextra -Werror -Wno-unknown-cuda-version>)
    # Random123 marks its functions __device__ in nvcc's device pass only; clang checks device code
    # in the host pass too and would find host functions called from the dropout kernels (and its
    # SSE declarations, host-only, would then clash).
    target_compile_definitions(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:R123_CUDA_DEVICE=__host__ __device__>" $<$<COMPILE_LANGUAGE:CUDA>:R123_USE_SSE=0>)
  else()
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror --expt-relaxed-constexpr>)
  endif()
endfunction()
