#!/usr/bin/env bash
# ctest packaging: the recipes HPC sites build kglm with (packaging/, man 7 kglm INSTALLATION).
# - Spack's package.py, loaded against a model of Spack's API (spack_check.py: Spack does not run here);
# - EasyBuild (PyPI's easybuild, pinned, in BUILD/easybuild-venv, Debian's Lmod as its modules tool):
#   `eb --dry-run --robot` of kglm-VERSION-foss-2023a.eb resolves every dependency in EasyBuild's own
#   easyconfigs, down to the foss/2023a toolchain, and ends with kglm's module; `eb --dry-run` of
#   kglm-VERSION.eb (system toolchain) plans kglm's module alone. Both easyconfigs have the version
#   of CMakeLists.txt and install every tool (their sanity_check_paths).
# Skips (77) the EasyBuild part, saying why, where PyPI cannot be reached.
# Usage: packaging_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
source "$src/tests/cli/common.sh" "$src/packaging"
python3 "$src/tests/install/spack_check.py" "$src/packaging/spack/kglm/package.py" "$src/CMakeLists.txt" ||
  fail "packaging/spack/kglm/package.py"

version=$(sed -n 's/^project(kglm VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
foss=$src/packaging/easybuild/kglm-$version-foss-2023a.eb system=$src/packaging/easybuild/kglm-$version.eb
[ -f "$foss" ] && [ -f "$system" ] || fail "no easyconfigs of version $version in packaging/easybuild"
for tool in wd-extract wiki-extract kg-cycles cs-gen kg-align verbalize sample-lang pretrain finetune probe kglm-plot; do
  grep -q "'$tool'" "$foss" && grep -q "'$tool'" "$system" || fail "an easyconfig does not check bin/$tool"
done

venv=$build/easybuild-venv pin=easybuild==5.4.1
if [ ! -x "$venv/bin/eb" ] || [ "$(cat "$venv/.pin" 2> /dev/null)" != "$pin" ]; then
  rm -rf "$venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$pin"; } > "$tmp/pip.log" 2>&1; then
    rm -rf "$venv"
    echo "skipped: EasyBuild could not be installed from PyPI: $(tail -1 "$tmp/pip.log")"
    exit 77
  fi
  echo "$pin" > "$venv/.pin"
fi
[ -f /usr/share/lmod/lmod/init/bash ] || fail "Lmod is not installed (cmake/install-deps.sh)"
set +u
source /usr/share/lmod/lmod/init/bash
set -u
export PATH=$venv/bin:$PATH
# EasyBuild refuses root unless told; its prefix, build and source paths in the scratch folder.
eb=(eb --dry-run --prefix="$tmp/eb" --sourcepath="$tmp/eb/sources" --allow-use-as-root-and-accept-consequences)
"${eb[@]}" --robot "$foss" > "$tmp/foss.out" 2>&1 || fail "eb --dry-run --robot $foss: $(tail -5 "$tmp/foss.out")"
grep -q "^ \* \[ \] .*kglm-$version-foss-2023a.eb (module: kglm/$version-foss-2023a)$" "$tmp/foss.out" ||
  fail "the foss easyconfig's plan has no kglm module: $(tail -5 "$tmp/foss.out")"
for dep in HDF5/1.14.0-gompi-2023a ICU/73.2 Boost/1.82.0 SentencePiece/0.2.0 Abseil/20230125.3 libzip/1.10.1 \
           matplotlib/3.7.2 foss/2023a OpenMPI/4.1.5 OpenBLAS/0.3.23; do
  grep -q "(module: $dep" "$tmp/foss.out" || fail "the plan lacks $dep"
done
ok "eb --dry-run --robot kglm-$version-foss-2023a.eb: $(grep -c '^ \* \[' "$tmp/foss.out") modules planned, EasyBuild $(eb --version | grep -o '[0-9.]*' | head -1)"
"${eb[@]}" "$system" > "$tmp/system.out" 2>&1 || fail "eb --dry-run $system: $(tail -5 "$tmp/system.out")"
[ "$(grep -c '^ \* \[' "$tmp/system.out")" = 1 ] && grep -q "(module: kglm/$version)$" "$tmp/system.out" ||
  fail "the system easyconfig's plan: $(tail -5 "$tmp/system.out")"
ok "eb --dry-run kglm-$version.eb: kglm/$version alone on the system toolchain"
