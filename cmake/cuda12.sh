#!/usr/bin/env bash
# make cuda12: a second CUDA toolchain, CUDA 12.9 from PyPI's wheels, for GPUs that CUDA 13 no longer
# builds (V100, sm_70). Nothing is installed system-wide: the toolkit is assembled in TOOLKIT_DIR.
#
# The wheels carry CUDA 12's headers, libraries, ptxas and libdevice but no nvcc (its front end,
# cudafe++ and cicc are not on PyPI), so clang (Debian's clang-19) compiles the CUDA code: it parses
# CUDA C++ itself, emits PTX, and runs the wheel's ptxas for the sm_70 cubin. Two small pieces are
# made here because no wheel has them: `fatbinary` (cmake/cuda12/fatbinary.cpp, over the wheel's
# nvFatbin library), which clang runs to bundle a file's cubin and PTX, and an `nvcc` that only
# answers CMake's two questions of a clang toolkit (its root and its version) and refuses the rest.
#
# Idempotent: when the stamp matches the pins, nothing is fetched.
# Usage: cmake/cuda12.sh TOOLKIT_DIR
set -euo pipefail
toolkit=${1:?usage: cmake/cuda12.sh TOOLKIT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
version=12.9.86
# One pin per wheel: the CUDA 12.9 release (cuBLAS 12.9.1 and NCCL 2.27 are its own).
wheels=(
  nvidia-cuda-nvcc-cu12==12.9.86
  nvidia-cuda-runtime-cu12==12.9.79
  nvidia-cuda-cccl-cu12==12.9.27
  nvidia-nvfatbin-cu12==12.9.82
  nvidia-cublas-cu12==12.9.1.4
  nvidia-nccl-cu12==2.27.3
)
stamp="$toolkit/.kglm-cuda12"
want=$(printf '%s\n' "${wheels[@]}" | cat - "$here/cmake/cuda12/fatbinary.cpp" "$0" | sha256sum | cut -d' ' -f1)

"$here/cmake/install-deps.sh" clang-19 python3-pip unzip
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
echo "kglm: assembling CUDA $version from PyPI's wheels in $toolkit (cmake/cuda12.sh)" >&2
rm -rf "$toolkit"
trap 'status=$?; [ $status -eq 0 ] || rm -rf "$toolkit"' EXIT
mkdir -p "$toolkit"/{bin,include,lib64,nvvm,.wheels}
python3 -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
  -d "$toolkit/.wheels" "${wheels[@]}"
unpacked="$toolkit/.wheels/unpacked"
for wheel in "$toolkit"/.wheels/*.whl; do
  unzip -q -o "$wheel" 'nvidia/*' -d "$unpacked"
done
for part in "$unpacked"/nvidia/*/; do
  [[ -d "$part/include" ]] && cp -a "$part/include/." "$toolkit/include/"
  [[ -d "$part/lib" ]] && cp -a "$part/lib/." "$toolkit/lib64/"
done
cp -a "$unpacked/nvidia/cuda_nvcc/bin/ptxas" "$toolkit/bin/"
cp -a "$unpacked/nvidia/cuda_nvcc/nvvm/libdevice" "$toolkit/nvvm/"
rm -rf "$toolkit/.wheels" "$toolkit/include/__init__.py" "$toolkit/lib64/__init__.py"
# The wheels hold the versioned libraries only; the linker looks for the unversioned names.
for lib in "$toolkit"/lib64/lib*.so.*; do
  ln -sf "$(basename "$lib")" "${lib%%.so.*}.so"
done
echo "CUDA Version $version" > "$toolkit/version.txt"

c++ -std=c++20 -O2 -Wall -Wextra -Werror "$here/cmake/cuda12/fatbinary.cpp" -I"$toolkit/include" \
  -L"$toolkit/lib64" -lnvfatbin -Wl,-rpath,'$ORIGIN/../lib64' -o "$toolkit/bin/fatbinary"
cat > "$toolkit/bin/nvcc" <<EOF
#!/bin/sh
# Not nvcc (PyPI's wheels carry none; clang compiles the CUDA code): CMake asks a clang toolkit's
# nvcc for its root (-v) and version (--version), and this answers only that.
here=\$(cd "\$(dirname "\$0")/.." && pwd)
case "\$1" in
  -v) echo "#\\\$ TOP=\$here" >&2; echo "#\\\$ NVVMIR_LIBRARY_DIR=\$here/nvvm/libdevice" >&2 ;;
  --version) echo "Cuda compilation tools, release ${version%.*}, V$version" ;;
  *) echo "nvcc: this CUDA 12 toolkit (cmake/cuda12.sh) has no nvcc; compile with clang++-19 --cuda-path=\$here" >&2; exit 2 ;;
esac
EOF
chmod +x "$toolkit/bin/nvcc"
echo "$want" > "$stamp"
