#!/usr/bin/env bash
# ctest cuda12: the V100 (sm_70) build, which CUDA 13 cannot make, kept compiling. With the CUDA 12
# toolchain of cmake/cuda12.sh (PyPI's wheels, clang-19), every source compiled against CUDA's
# headers (BUILD/lib/cuda-header-sources.txt: each kernel file, the CUDA runtime, the NCCL
# communicator) is compiled for sm_70 + compute_70 PTX with -Werror, and `pretrain` is linked from
# those objects and BUILD's other objects (they include no CUDA header): the whole tree twice would
# not fit CI's budget. `make cuda12` builds everything for sm_70.
# Checks: every kernel object carries an sm_70 cubin and compute_70 PTX and nothing else; pretrain
# loads CUDA 12's runtime and cuBLAS (never CUDA 13's); it runs, and refuses --device cuda in one
# line where there is no GPU.
# Skips (77), saying why, where the wheels or clang-19 cannot be installed or BUILD has no CUDA.
# Usage: sm70_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
sources=$build/lib/cuda-header-sources.txt
[ -f "$sources" ] || { echo "skipped: $build is not a CUDA build"; exit 77; }
[ -f "$build/lib/libkglm.a" ] && [ -f "$build/bin/CMakeFiles/pretrain.dir/pretrain.cpp.o" ] ||
  fail "build $build first (its libkglm.a and pretrain.cpp.o are linked here)"

toolkit=$build/cuda12-toolkit
if ! "$src/cmake/cuda12.sh" "$toolkit"; then
  echo "skipped: the CUDA 12 toolchain could not be assembled (PyPI's nvidia-*-cu12 wheels or Debian's clang-19 unreachable)"
  exit 77
fi

check=$build/sm70-check
start=$SECONDS
cmake -S "$src" -B "$check" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DKGLM_CUDA=ON -DKGLM_CUDA_ARCHS=70 \
  -DCMAKE_CUDA_COMPILER=clang++-19 -DCUDAToolkit_ROOT="$toolkit" > "$check.configure.log" 2>&1 ||
  { cat "$check.configure.log"; fail "configuring the sm_70 build"; }
grep -q "^CMAKE_CUDA_COMPILER_TOOLKIT_VERSION.*12\.\|TOOLKIT_VERSION \"12\." "$check"/CMakeFiles/*/CMakeCUDACompiler.cmake ||
  fail "the sm_70 build did not find CUDA 12"
mapfile -t files < "$sources"
objects=() members=()
for f in "${files[@]}"; do
  objects+=("$check/lib/CMakeFiles/kglm.dir/$f.o")
  members+=("$(basename "$f").o")
done
make -C "$check/lib" -j "${JOBS:-2}" "${files[@]/%/.o}" > "$check.compile.log" 2>&1 ||
  { grep -E "error|warning" "$check.compile.log" | head -40; fail "compiling the CUDA sources for sm_70"; }
echo "compiled ${#files[@]} sources against CUDA 12 for sm_70 in $((SECONDS - start)) s"

# Every object with kernels: an sm_70 cubin and compute_70 PTX (the V100 runs the first; newer GPUs
# JIT-compile the second).
kernels=0
while IFS= read -r line; do
  images=${line#*: }
  [ -z "$images" ] && continue  # host code only
  [ "$images" = "compute_70 sm_70" ] || fail "GPU images not sm_70 + compute_70: $line"
  kernels=$((kernels + 1))
done < <(python3 "$src/tests/cuda12/fatbin_images.py" "${objects[@]}")
[ $kernels -ge 20 ] || fail "only $kernels objects with kernels"

# pretrain: this build's library with the CUDA objects replaced by the sm_70 ones.
cp "$build/lib/libkglm.a" "$check/lib/libkglm.a"
# ar removes members by name: each replaced one must be the only member of its name.
for m in "${members[@]}"; do
  [ "$(ar t "$check/lib/libkglm.a" | grep -cxF "$m")" = 1 ] || fail "libkglm.a has not exactly one member $m"
done
ar d "$check/lib/libkglm.a" "${members[@]}"
ar q "$check/lib/libkglm.a" "${objects[@]}"
ranlib "$check/lib/libkglm.a"
mkdir -p "$check/bin/CMakeFiles/pretrain.dir"
cp "$build/bin/CMakeFiles/pretrain.dir/pretrain.cpp.o" "$check/bin/CMakeFiles/pretrain.dir/"
(cd "$check/bin" && sh -c "$(cat CMakeFiles/pretrain.dir/link.txt)") || fail "linking pretrain for sm_70"
exe=$check/bin/pretrain
libraries=$(ldd "$exe")
for lib in libcudart.so.12 libcublas.so.12 libcublasLt.so.12; do
  grep -q "$lib => $toolkit/lib64/" <<< "$libraries" || fail "pretrain does not load $lib from $toolkit: $libraries"
done
! grep -q "\.so\.13" <<< "$libraries" || fail "pretrain loads a CUDA 13 library: $(grep '\.so\.13' <<< "$libraries")"
[ "$(python3 "$src/tests/cuda12/fatbin_images.py" "$exe" | cut -d' ' -f2-)" = "compute_70 sm_70" ] ||
  fail "pretrain's GPU images: $(python3 "$src/tests/cuda12/fatbin_images.py" "$exe")"
"$exe" --help > /dev/null || fail "pretrain --help"
if ! command -v nvidia-smi > /dev/null; then
  out=$("$exe" --device cuda --data /nonexistent.h5 --out "$check/run" 2>&1) && fail "--device cuda ran without a GPU"
  [ "$(wc -l <<< "$out")" -eq 1 ] && grep -q -- "--device cuda" <<< "$out" || fail "--device cuda without a GPU said: $out"
fi
echo "ok: $kernels kernel objects with sm_70 + compute_70; pretrain linked against CUDA 12 ($((SECONDS - start)) s)"
