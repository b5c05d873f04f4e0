#!/usr/bin/env bash
# Runs one reference comparison with the reference environment's python; exits 77 (ctest's skip),
# saying why, when that environment has not been installed (make references).
# Usage: run.sh PYTHON SCRIPT [ARG...]
set -euo pipefail
python=$1
shift
if [[ ! -x "$python" ]]; then
  echo "SKIP: no reference environment at $python (run: make references)" >&2
  exit 77
fi
exec "$python" "$@"
