# Required libraries (Debian packages, see cmake/install-deps.sh) and optional accelerators.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(ICU REQUIRED COMPONENTS uc i18n)
find_package(LibXml2 REQUIRED)
find_package(Boost REQUIRED COMPONENTS program_options)
find_package(ZLIB REQUIRED)
find_package(BZip2 REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(SIMDJSON REQUIRED IMPORTED_TARGET simdjson)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(CRCUTIL REQUIRED IMPORTED_TARGET libcrcutil)  # CRC-32C of TensorBoard's event files
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
find_package(absl REQUIRED)

# Optional: CUDA, MPI, NCCL (used by the training tools).
include(CheckLanguage)
set(_cuda_found OFF)
if(NOT KGLM_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(_cuda_found ON)
    endif()
  endif()
endif()
kglm_optional(CUDA _cuda_found)
if(KGLM_HAVE_CUDA)
  kglm_default_cuda_archs(_kglm_default_archs)
  set(KGLM_CUDA_ARCHS "${_kglm_default_archs}" CACHE STRING "GPU architectures of the CUDA backend (e.g. 70;80;90)")
  set(CMAKE_CUDA_ARCHITECTURES ${KGLM_CUDA_ARCHS})
  # CMake 3.25 knows no C++20 flag for nvcc 13, so the kernels (and the headers they include) are
  # C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)  # libkglm links CUDA::cudart itself (kglm_link_cuda)
  enable_language(CUDA)
  # Dependencies found in /usr/include (Random123, ICU, Boost) must not become -isystem flags of
  # nvcc: searched before its C++ headers, /usr/include breaks their #include_next <math.h>.
  list(APPEND CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
endif()

set(_mpi_found OFF)
if(NOT KGLM_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(_mpi_found ON)
  endif()
endif()
kglm_optional(MPI _mpi_found)

set(_nccl_found OFF)
if(NOT KGLM_NCCL STREQUAL "OFF")
  # The toolkit's own NCCL first (the CUDA 12 toolkit of cmake/cuda12.sh carries one).
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found ON)
  endif()
endif()
kglm_optional(NCCL _nccl_found)

# Training engine: SentencePiece (lib/tok), OpenBLAS sgemm and OpenMP (lib/nn CPU backend).
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# oneDNN: the bf16 products of --precision bf16 on the CPU (lib/nn/cpu/gemm_bf16_cpu.cpp).
find_package(dnnl CONFIG REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
