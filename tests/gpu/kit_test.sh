#!/usr/bin/env bash
# ctest gpu_kit: packs the GPU kit, unpacks it under another path and runs tests/gpu/run.sh --local
# from there, as the GPU machine would but without a GPU: every stage must run its commands and
# report its GPU cases as skipped (never failed, never "not found"), and the summary must print.
# Where it may (root, unshare), it runs in a mount namespace that hides what the GPU machine lacks:
# the source tree and the build, ../shared, OpenMPI's installed components and help files, ssh, xz and
# Debian's libraries that the kit carries (HDF5, ICU, OpenBLAS, Boost, libxml2, sentencepiece,
# zstd, OpenMPI, ...), so a file left out of the kit fails here, before a minute of device time.
# Usage: kit_test.sh BUILD_DIR SOURCE_DIR FIXTURES_DIR
set -euo pipefail
build=$1 src=$2 fixtures=$3
[ -d "$fixtures/tokenizer" ] || { echo "fixtures not found at $fixtures: skipped"; exit 77; }
grep -q "KGLM_CUDA_ARCHS:STRING=." "$build/CMakeCache.txt" || { echo "not a CUDA build: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The V100 build's stage too, where ctest cuda12 (run before this one) linked its pretrain; CUDA 12's
# cuBLAS, which the kit cannot carry, is shown to the stage at another path (KGLM_CUDA12_LIBS).
sm70=() cuda12_libs=$build/cuda12-toolkit/lib64
if [ -x "$build/sm70-check/bin/pretrain" ] && [ -f "$cuda12_libs/libcublasLt.so.12" ]; then
  sm70=(--sm70 "$build/sm70-check")
  export KGLM_CUDA12_LIBS=$cuda12_libs
fi
"$src/tests/gpu/pack.sh" --build "$build" --fixtures "$fixtures" -o "$tmp/carried/kglm-gpu-kit.tar.xz" --fast "${sm70[@]}"
mkdir -p "$tmp/elsewhere"
tar -xJf "$tmp/carried/kglm-gpu-kit.tar.xz" -C "$tmp/elsewhere"
kit=$tmp/elsewhere/kglm-gpu-kit
[ -x "$kit/mpi/bin/mpirun" ] || fail "the kit has no mpirun"

# The unpacked kit's run.sh given the archive: it unpacks that once more and runs its own copy, as
# the repository's run.sh does on the GPU machine.
run=("$kit/src/tests/gpu/run.sh" --local --kit "$tmp/carried/kglm-gpu-kit.tar.xz" --out "$tmp/out")
hide=$(cat <<'SH'
set -e
shared=$(cd "$1/../shared" 2> /dev/null && pwd || true)
[ -n "${CUDA12_LIBS_FROM:-}" ] && mount --bind "$CUDA12_LIBS_FROM" "$KGLM_CUDA12_LIBS"
for d in "$1" $shared $(ompi_info --path pkglibdir --parsable | cut -d: -f3) \
         $(ompi_info --path pkgdatadir --parsable | cut -d: -f3); do
  [ -d "$d" ] && mount -t tmpfs none "$d"
done
# Nor has it ssh (mpirun must launch without it) or, perhaps, xz (run.sh then unpacks with python3).
for f in /usr/bin/orterun /usr/bin/mpirun.openmpi /usr/bin/ssh /usr/bin/xz; do
  [ -e "$f" ] && mount --bind /dev/null "$f"
done
for f in /usr/lib/x86_64-linux-gnu/lib*.so*; do
  case ${f##*/} in
    libhdf5*|libicu*|libopenblas*|libgfortran*|libboost*|libxml2*|libsentencepiece*|libprotobuf*|libzstd*|libmpi*|\
    libopen-rte*|libopen-pal*|libpmix*|libhwloc*|libevent*|libsimdjson*|libdeflate*|libabsl*|libfabric*|libuc[pmst]*|\
    libpsm*|libibverbs*|librdmacm*|libmunge*) [ -f "$f" ] && ! [ -L "$f" ] && mount --bind /dev/null "$f" ;;
  esac
done
shift
cd /
exec "$@"
SH
)
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2> /dev/null; then
  echo "hiding the source tree, ../shared, OpenMPI and Debian's libraries that the kit carries"
  if [ ${#sm70[@]} -gt 0 ]; then  # the build, with CUDA 12's cuBLAS, is hidden: shown elsewhere
    mkdir -p "$tmp/cuda12-libs"
    export KGLM_CUDA12_LIBS=$tmp/cuda12-libs CUDA12_LIBS_FROM=$cuda12_libs
  fi
  unshare -m --propagation private bash -c "$hide" hide "$src" "${run[@]}" | tee "$tmp/run.out" || code=$?
else
  echo "no mount namespace here (not root, or unshare refused): the kit runs beside the installed libraries"
  (cd / && "${run[@]}") | tee "$tmp/run.out" || code=$?
fi
[ "${code:-0}" -eq 0 ] || fail "run.sh --local exited ${code}"

summary=$tmp/out/summary.md
[ -f "$summary" ] || fail "no summary"
grep -q '^| stage | passed | failed | skipped | seconds |' "$tmp/run.out" || fail "the summary was not printed"
for s in device ops tools; do
  row=$(grep "^| $s |" "$summary") || fail "no row for stage $s"
  read -r passed failed skipped <<< "$(echo "$row" | awk -F'|' '{print $3, $4, $5}')"
  [ "$failed" -eq 0 ] || fail "stage $s: $failed failed: $(grep '^FAIL' "$tmp/out/$s.log" | head -5)"
  [ "$skipped" -gt 0 ] || fail "stage $s skipped nothing: its GPU cases did not run"
  echo "ok: stage $s: $passed passed, $skipped GPU cases skipped"
done
! grep -il "command not found\|no such file\|cannot open shared object" "$tmp/out"/*.log ||
  fail "something was not found: $(grep -ih "command not found\|no such file\|cannot open shared object" "$tmp/out"/*.log | head -5)"
# Every GPU test case of the kit's binaries was listed and skipped, none dropped by the filter.
[ "$(grep -c '^skip: nn_ops_test Devices/OpsOnDevice\..*/cuda' "$tmp/out/ops.log")" -ge 10 ] || fail "the CUDA op cases"
for t in nn_model_test nn_elmo_test trainer_class_test verbalize_test; do
  grep -q "^skip: $t " "$tmp/out/ops.log" || fail "$t has no skipped GPU case"
done
grep -q '^skip: \[mpi\] nccl_test ' "$tmp/out/tools.log" || fail "nccl_test did not run under the kit's mpirun"
grep -q '^ok: \[mpi\] the kit.s mpirun starts a rank' "$tmp/out/tools.log" || fail "the kit's mpirun did not start a rank"
for g in pretrain elmo finetune frozen probe verbalize; do
  grep -q "^skip: \[$g\]" "$tmp/out/tools.log" || fail "the $g group skipped no --device cuda command"
done
if [ ${#sm70[@]} -gt 0 ]; then
  grep -q "^| sm70 |" "$summary" || fail "no row for stage sm70"
  ! grep -q '^FAIL' "$tmp/out/sm70.log" || fail "stage sm70: $(grep '^FAIL' "$tmp/out/sm70.log" | head -3)"
  [ "$(grep -c '^ok: sm70 pretrain --device cuda --precision' "$tmp/out/sm70.log")" = 2 ] ||
    fail "stage sm70 did not run the V100 build's pretrain: $(head -5 "$tmp/out/sm70.log")"
  echo "ok: stage sm70: the V100 build's pretrain ran from the kit, CUDA 12's cuBLAS found at KGLM_CUDA12_LIBS"
fi
# ELMo's checks ran on the CPU in the GPU's place: GPU against CPU, rerun, resume, bf16, fp16, embed.
[ "$(grep -c '^ok: \[elmo\]' "$tmp/out/tools.log")" -ge 6 ] ||
  fail "the elmo group: $(grep '\[elmo\]' "$tmp/out/tools.log" | head -8)"
echo "gpu kit: $(du -h "$tmp/carried/kglm-gpu-kit.tar.xz" | cut -f1), run.sh --local passes from $kit"
