#!/usr/bin/env bash
# ctest install_tree: kglm installed as an HPC site installs it (man 7 kglm, INSTALLATION) and used
# as a cluster user uses it. `cmake --install` into a staging prefix; the tree is moved to
# BUILD/installed/kglm/VERSION (it must not care where it lives); then, in a mount namespace where
# the source tree, the build tree (but the moved tree and the demo's run folder) and ../shared are
# hidden, and with an empty environment (PATH=/usr/bin:/bin):
# - Debian's Lmod loads the tree's modulefile: the tools on PATH, MANPATH, KGLM_HOME; the OpenMP and
#   OpenBLAS threads from SLURM_CPUS_PER_TASK; unloading restores the environment;
# - `man -M PREFIX/share/man pretrain` and man 7 kglm read from the tree;
# - make demo's pipeline from the tree (PREFIX/share/kglm/pipelines/demo.sh, KGLM_BIN unset: the tools
#   found on PATH, the samples and templates in PREFIX/share/kglm/data), which runs every tool but
#   probe and kglm-plot's figures, into RUN (slurm_demo compares its --submit run with it);
# - probe on the demo's model, verbalize and kg-align qa with the shipped templates and question
#   forms named as `templates` and `questions`, pretrain --architecture elmo with the shipped
#   `elmo/options-small.json`: the tools find the data from their own path.
# Then, outside, the demo's figures are checked. Without root or unshare the same runs happen
# beside the source tree (said so).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR RUN
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) run=$3
source "$src/tests/cli/common.sh" "$src/data"
command -v module > /dev/null 2>&1 || [ -f /usr/share/lmod/lmod/init/bash ] || fail "Lmod is not installed (cmake/install-deps.sh)"

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
cmake --install "$build" --prefix "$tmp/staging/kglm/$version" > "$tmp/install.log" || fail "cmake --install: $(tail "$tmp/install.log")"
rm -rf "$build/installed"
mkdir -p "$build/installed"
mv "$tmp/staging/kglm" "$build/installed/"
prefix=$build/installed/kglm/$version
echo "installed and moved to $prefix: $(du -sh "$prefix" | cut -f1), $(find "$prefix" -type f | wc -l) files"
for tool in wd-extract wiki-extract kg-cycles cs-gen kg-align verbalize sample-lang pretrain finetune probe kglm-plot; do
  [ -x "$prefix/bin/$tool" ] || fail "bin/$tool not installed"
done
for page in man1/pretrain.1 man5/kglm-kg.5 man7/kglm.7 man7/kglm-slurm.7; do
  ls "$prefix/share/man/$page"* > /dev/null 2>&1 || fail "share/man/$page not installed"
done
rm -rf "$run" && mkdir -p "$run" && run=$(cd "$run" && pwd)

# What a user does, in an empty environment: $1 the tree, $2 the demo's run folder, $3 scratch.
user=$(cat <<'SH'
set -euo pipefail
prefix=$1 run=$2 scratch=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
source /usr/share/lmod/lmod/init/bash
module use "$prefix/share/modulefiles"
module load kglm
[ "$(command -v pretrain)" = "$prefix/bin/pretrain" ] || fail "module load kglm: pretrain is $(command -v pretrain)"
[[ ":$MANPATH:" == *":$prefix/share/man:"* ]] && [ "$KGLM_HOME" = "$prefix/share/kglm" ] || fail "MANPATH/KGLM_HOME"
[ -z "${OMP_NUM_THREADS:-}" ] || fail "OMP_NUM_THREADS set outside a Slurm task"
module unload kglm
! command -v pretrain > /dev/null || fail "module unload kglm left pretrain on PATH"
SLURM_CPUS_PER_TASK=3 module load kglm
[ "${OMP_NUM_THREADS:-}" = 3 ] && [ "${OPENBLAS_NUM_THREADS:-}" = 3 ] || fail "a Slurm task of 3 CPUs: OMP_NUM_THREADS=${OMP_NUM_THREADS:-}"
module unload kglm
[ -z "${OMP_NUM_THREADS:-}${OPENBLAS_NUM_THREADS:-}" ] || fail "module unload kglm left OMP_NUM_THREADS=${OMP_NUM_THREADS:-}"
export OMP_NUM_THREADS=1
SLURM_CPUS_PER_TASK=4 module load kglm
[ "$OMP_NUM_THREADS" = 4 ] || fail "in a Slurm task of 4 CPUs, OMP_NUM_THREADS=$OMP_NUM_THREADS"
module unload kglm
[ "$OMP_NUM_THREADS" = 1 ] || fail "module unload kglm did not restore OMP_NUM_THREADS=1: $OMP_NUM_THREADS"
unset OMP_NUM_THREADS
module load kglm
ok "module load kglm (Lmod $(module --version 2>&1 | grep -o 'Version [0-9.]*' | head -1)): PATH, MANPATH, KGLM_HOME, threads from SLURM_CPUS_PER_TASK"
man -P cat pretrain 2> /dev/null | grep -q "masked-language-model" || fail "man pretrain through MANPATH"
man -P cat -M "$prefix/share/man" pretrain 2> /dev/null | grep -q "masked-language-model" || fail "man -M PREFIX/share/man pretrain"
man -P cat -M "$prefix/share/man" 7 kglm 2> /dev/null | grep -q "INSTALLATION" || fail "man -M PREFIX/share/man 7 kglm"
ok "man pages from the tree"

cd "$scratch"
"$KGLM_HOME/pipelines/demo.sh" --force "$run" > demo.log 2>&1 || fail "the demo from the tree: $(tail -5 demo.log)"
ok "the demo pipeline from the tree, KGLM_BIN unset ($(grep -c '^== ' demo.log) stages)"
verbalize render --kg "$run/kg.h5" --mode template --templates templates --langs en -o template.jsonl --quiet \
  "$run/subgraphs.jsonl" || fail "verbalize --templates templates"
[ -s template.jsonl ] || fail "verbalize with the shipped templates wrote nothing"
kg-align qa --kg "$run/kg.h5" --questions questions -o qa.json --quiet "$run/docs.jsonl" || fail "kg-align qa --questions questions"
probe --model "$run/ckpt" --kg "$run/kg.h5" --relations P19,P27 --templates templates -o probe --quiet ||
  fail "probe --templates templates"
pretrain --architecture elmo --options elmo/options-small.json --data "$run/elmo/words.h5" --batch 4 --steps 2 \
  --out elmo --quiet 2> /dev/null || fail "pretrain --options elmo/options-small.json"
ok "probe, verbalize, kg-align qa and pretrain (ELMo) read the shipped data by name"
SH
)
mkdir -p "$tmp/scratch"
clean_env=(env -i HOME="$tmp/scratch" PATH=/usr/bin:/bin LANG=C.UTF-8 TMPDIR="$tmp/scratch")
# In the namespace: the tree and the run folder kept at their paths (bound aside, the source tree
# hidden under an empty tmpfs, then bound back), everything else of the source and build trees gone.
hide=$(cat <<'SH'
set -e
src=$1 prefix=$2 run=$3 hold=$4
shift 4
mkdir -p "$hold/prefix" "$hold/run"
mount --bind "$prefix" "$hold/prefix" && mount --bind "$run" "$hold/run"
shared=$(cd "$src/../shared" 2> /dev/null && pwd || true)
for d in "$src" $shared; do mount -t tmpfs none "$d"; done
mkdir -p "$prefix" "$run"
mount --bind "$hold/prefix" "$prefix" && mount --bind "$hold/run" "$run"
[ ! -e "$src/CMakeLists.txt" ] && [ ! -e "$src/build/CMakeCache.txt" ] || { echo "FAIL: the source tree is not hidden" >&2; exit 1; }
cd /
exec "$@"
SH
)
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2> /dev/null; then
  echo "hiding the source tree, the build tree and ../shared"
  unshare -m --propagation private bash -c "$hide" hide "$src" "$prefix" "$run" "$tmp/hold" \
    "${clean_env[@]}" bash -c "$user" user "$prefix" "$run" "$tmp/scratch" || fail "as a user of the installed tree"
else
  echo "no mount namespace here (not root, or unshare refused): the tree runs beside the source tree"
  (cd / && "${clean_env[@]}" bash -c "$user" user "$prefix" "$run" "$tmp/scratch") || fail "as a user of the installed tree"
fi

figures=(pretrain-curves verbalizer-curves elmo-curves finetune-ner finetune-relation finetune-xlr frozen-elmo sample-lang)
paths=()
for f in "${figures[@]}"; do paths+=("$run/figures/$f.png"); done
/usr/bin/python3 "$src/tests/cli/figure_check.py" "${paths[@]}"
[ "$(ls "$run/figures" | wc -l)" = ${#figures[@]} ] || fail "figures: $(ls "$run/figures")"
ok "the demo's ${#figures[@]} figures, drawn by the installed kglm-plot"
