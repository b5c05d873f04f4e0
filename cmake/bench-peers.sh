#!/usr/bin/env bash
# make bench: the peers of the CPU benchmarks (bench/peers/requirements.txt) in a project-local
# virtual environment. Idempotent: when the stamp matches the pins, nothing is fetched.
# Usage: cmake/bench-peers.sh VENV_DIR
set -euo pipefail
venv=${1:?usage: cmake/bench-peers.sh VENV_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
pins=$here/bench/peers/requirements.txt
stamp="$venv/.kglm-bench-peers"
want=$(sha256sum < "$pins" | cut -d' ' -f1)
"$here/cmake/install-deps.sh" python3-venv
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]; then
  exit 0
fi
echo "kglm: installing the benchmark peers into $venv (bench/peers/requirements.txt)" >&2
rm -rf "$venv"
trap 'status=$?; [ $status -eq 0 ] || rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip --disable-pip-version-check -q install -r "$pins"
"$venv/bin/python" -c 'import torch, onnxruntime, ctranslate2, transformers, h5py; print("bench peers: torch", torch.__version__, "onnxruntime", onnxruntime.__version__, "ctranslate2", ctranslate2.__version__)'
echo "$want" > "$stamp"
