#!/usr/bin/env bash
# Packs the GPU kit: one archive (at most 52 MiB) that a lent GPU machine (Ubuntu, CUDA 13 driver and
# toolkit, PyTorch; none of Debian's HDF5, ICU, OpenBLAS, Boost, libxml2, sentencepiece, zstd or
# OpenMPI; no network) runs every GPU check from: tests/gpu/run.sh unpacks it (README.md there).
#
# Usage: tests/gpu/pack.sh [--build DIR] [--fixtures DIR] [-o ARCHIVE] [--fast] [--sm70 DIR]
#   defaults: --build build, --fixtures ../shared/fixtures, -o BUILD/gpu-kit/kglm-gpu-kit.tar.xz
#   --sm70 DIR: also the V100 build of `make cuda12` (DIR: BUILD/sm70): its pretrain and nn_ops_test
#           and CUDA 12's runtime, under sm70/, for run.sh's stage sm70. CUDA 12's cuBLAS (854 MB)
#           does not fit: the stage finds it on the GPU machine or skips.
#   --fast: xz's fastest preset and no size limit, for ctest gpu_kit, which tests what the kit holds
#           (xz -8 is most of the packing time; `make gpu-kit` packs as the device call needs it).
#
# The kit (folder kglm-gpu-kit/):
#   bin/      every tool of the build          tests/   the test binaries that hold GPU cases
#   lib/      the shared libraries those load, but the C runtime and CUDA's own (the GPU machine's)
#   helpers/  spm_train (sentencepiece's trainer), which the verbalize checks call
#   mpi/      OpenMPI's mpirun with its components and help files, relocatable with OPAL_PREFIX
#   src/      the scripts the stages call (tests/gpu, tests/cli's checkers, bench/), data/'s samples,
#             tests/reference/data (the parity fixtures)
#   fixtures/ the few fixture files the stages read, copied from ../shared/fixtures (never committed)
#   sm70/     with --sm70: the V100 build's pretrain and nn_ops_test, sm70/lib CUDA 12's runtime
#   MANIFEST  what was packed, from which commit, for which GPU architectures
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=build fixtures=$src/../shared/fixtures archive="" fast=0 sm70=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift ;;
    --fixtures) fixtures=$2; shift ;;
    -o) archive=$2; shift ;;
    --fast) fast=1 ;;
    --sm70) sm70=$2; shift ;;
    *) echo "pack.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=$(cd "$build" && pwd)
archive=${archive:-$build/gpu-kit/kglm-gpu-kit.tar.xz}
# A device call carries 64 MiB in all: the kit and the working tree (9 MiB, data/ most of it).
limit=$((52 << 20))
die() { echo "pack.sh: $*" >&2; exit 1; }
[ -d "$fixtures/tokenizer" ] || die "fixtures not found at $fixtures (--fixtures DIR)"

grep -q "KGLM_CUDA_ARCHS:STRING=." "$build/CMakeCache.txt" 2> /dev/null || die "$build is not a CUDA build of kglm"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
kit=$stage/kglm-gpu-kit
mkdir -p "$kit"/{bin,tests,helpers,lib,mpi/bin,src,fixtures}

# The GPU machine's own: the C runtime (newer there) and CUDA's libraries (its toolkit and PyTorch's
# nvidia-* packages, found by run.sh); everything else an executable loads travels.
own='^(linux-vdso|libc|libm|libmvec|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl|libcudnn[a-z_]*|ld-linux-x86-64)\.so'
bundle_libraries() {  # ELF files: copy what they load into lib/
  local lib base
  for lib in $(ldd "$@" 2> /dev/null | awk '/=> \// {print $3}' | sort -u); do
    base=$(basename "$lib")
    [[ $base =~ $own ]] && continue
    [ -e "$kit/lib/$base" ] || cp -L "$lib" "$kit/lib/$base"
  done
}
is_elf() { [ "$(head -c4 "$1" | tail -c3)" = ELF ]; }

for exe in "$build"/bin/*; do [ -f "$exe" ] && is_elf "$exe" && cp "$exe" "$kit/bin/"; done
[ -x "$kit/bin/pretrain" ] || die "no tools under $build/bin: build first (make build)"
tests=(nn_ops_test nn_model_test nn_elmo_test trainer_class_test verbalize_test nccl_test)
for t in "${tests[@]}"; do
  [ -x "$build/tests/$t" ] || die "$build/tests/$t missing: build first"
  cp "$build/tests/$t" "$kit/tests/"
done
# spm_train (Debian's sentencepiece): the verbalize checks and bench/verbalize.py train their T5
# tokenizer with it, and the GPU machine has none.
cp -L "$(command -v spm_train)" "$kit/helpers/" || die "spm_train not installed (apt-get install sentencepiece)"
bundle_libraries "$kit"/bin/* "$kit"/tests/* "$kit"/helpers/*
# The V100 build (make cuda12): CUDA 12's runtime travels with it, the rest of CUDA 12 cannot.
if [ -n "$sm70" ]; then
  mkdir -p "$kit/sm70/lib"
  for f in bin/pretrain tests/nn_ops_test; do
    if [ -x "$sm70/$f" ]; then cp "$sm70/$f" "$kit/sm70/"; fi
  done
  [ -x "$kit/sm70/pretrain" ] || die "no pretrain under $sm70/bin: make cuda12 first"
  cudart=$(ldd "$kit/sm70/pretrain" | awk '$1 == "libcudart.so.12" {print $3}')
  [ -f "$cudart" ] || die "$sm70/bin/pretrain does not load CUDA 12's runtime (libcudart.so.12)"
  cp -L "$cudart" "$kit/sm70/lib/"
  bundle_libraries "$kit"/sm70/pretrain "$kit"/sm70/nn_ops_test
  strip --strip-unneeded "$kit"/sm70/pretrain "$kit"/sm70/nn_ops_test 2> /dev/null || true
fi
# Symbol tables are not needed to run (backtraces still name the dynamic symbols): about 6% less.
strip --strip-unneeded "$kit"/bin/* "$kit"/tests/*

# OpenMPI: mpirun (orterun) and, under the same relative paths as below its installed prefix, its
# components (dlopened) and help files; OPAL_PREFIX points it at the kit.
if command -v ompi_info > /dev/null && command -v mpirun > /dev/null; then
  path_of() { ompi_info --path "$1" --parsable | sed -n "s/^path:$1://p"; }
  prefix=$(path_of prefix) pkglibdir=$(path_of pkglibdir) pkgdatadir=$(path_of pkgdatadir)
  cp -L "$(command -v mpirun)" "$kit/mpi/bin/mpirun"
  mkdir -p "$kit/mpi/${pkglibdir#"$prefix"/}" "$kit/mpi/${pkgdatadir#"$prefix"/}"
  # Not the components of cluster fabrics (UCX, libfabric, InfiniBand verbs, PSM): one node needs
  # shared memory and TCP, and their libraries would add about 2 MiB to the packed kit.
  for component in "$pkglibdir"/*.so; do
    case ${component##*/} in *ucx*|*ofi*|*openib*|*psm*|*verbs*) continue ;; esac
    cp -L "$component" "$kit/mpi/${pkglibdir#"$prefix"/}/"
  done
  cp -L "$pkgdatadir"/help-*.txt "$pkgdatadir"/*.ini "$kit/mpi/${pkgdatadir#"$prefix"/}/" 2> /dev/null || true
  bundle_libraries "$kit/mpi/bin/mpirun" "$kit/mpi/${pkglibdir#"$prefix"/}"/*.so
else
  echo "pack.sh: no OpenMPI here: the kit has no mpirun (the NCCL checks will fail)" >&2
fi

# Scripts and data the stages read.
copy_src() { local p; for p in "$@"; do mkdir -p "$kit/src/$(dirname "$p")"; cp -R "$src/$p" "$kit/src/$p"; done; }
copy_src tests/gpu bench data/wikidata-sample.json data/enwiki-sample.xml data/templates data/elmo \
  tests/reference/data tests/cli/losses_match.py tests/cli/compare_runs.py tests/cli/metrics_match.py tests/cli/same_records.py \
  tests/cli/make_tiny_mlm.py tests/data/wic tests/data/slots
find "$kit/src" -name __pycache__ -prune -exec rm -rf {} +
copy_fixture() { local p; for p in "$@"; do
  [ -e "$fixtures/$p" ] || die "fixture $p missing under $fixtures"
  mkdir -p "$kit/fixtures/$(dirname "$p")"; cp -R "$fixtures/$p" "$kit/fixtures/$p"
done; }
copy_fixture tokenizer/spm-test-vocab1000.model tokenizer/botchan.txt panx/dev-en.tsv xfactr/alias xfactr/facts \
  xfactr/templates xfactr-kg-dev.json.gz wikipedia/enwiki-sample-a.xml.bz2 ud/en_ewt-ud-dev.conllu \
  ud/it_isdt-ud-dev.conllu ud/sv_talbanken-ud-dev.conllu ud/zh_gsd-ud-dev.conllu xnli/dev-en.first600.tsv \
  xquad/xquad.en.json

commit=$(git -C "$src" describe --always --dirty 2> /dev/null || echo unknown)
{
  echo "kglm GPU kit, packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from commit $commit"
  echo "CUDA architectures: $(sed -n 's/^KGLM_CUDA_ARCHS:STRING=//p' "$build/CMakeCache.txt"); nvcc $(
    /usr/local/cuda/bin/nvcc --version 2> /dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "tools: $(ls "$kit/bin" | tr '\n' ' ')"
  echo "tests: ${tests[*]}"
  [ -n "$sm70" ] && echo "sm70 (CUDA 12, sm_70 + compute_70 PTX): $(ls "$kit/sm70" | grep -v '^lib$' | tr '\n' ' ')"
  echo "libraries: $(ls "$kit/lib" | wc -l) bundled; mpirun: $([ -x "$kit/mpi/bin/mpirun" ] && echo yes || echo no)"
} > "$kit/MANIFEST"

mkdir -p "$(dirname "$archive")"
tmp_archive=$archive.tmp.$$
level=-8
[ $fast = 1 ] && level=-0
tar -C "$stage" -cf - kglm-gpu-kit | xz -T0 $level > "$tmp_archive" || { rm -f "$tmp_archive"; die "tar/xz failed"; }
size=$(stat -c %s "$tmp_archive")
if [ "$size" -gt $limit ] && [ $fast = 0 ]; then
  rm -f "$tmp_archive"
  die "the kit is $((size >> 20)) MiB, over its $((limit >> 20)) MiB limit ($(du -sh "$kit" | cut -f1) unpacked)"
fi
mv "$tmp_archive" "$archive"
echo "gpu-kit: $archive, $((size >> 20)) MiB ($(du -sh "$kit" | cut -f1) unpacked): $(ls "$kit/bin" | wc -l) tools," \
  "${#tests[@]} test binaries, $(ls "$kit/lib" | wc -l) libraries"
