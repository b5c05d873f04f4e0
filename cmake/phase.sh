#!/usr/bin/env bash
# Runs one phase of `make test` / `make sanitize` and records its wall time, so that CI can print
# where its budget went (.ci/run, tests/README.md). Appends "NAME<TAB>SECONDS<TAB>EXIT" to LOG.
# Usage: cmake/phase.sh LOG NAME COMMAND [ARG...]
set -uo pipefail
log=$1 name=$2
shift 2
mkdir -p "$(dirname "$log")"
start=$(date +%s%N)
"$@"
code=$?
ms=$((($(date +%s%N) - start) / 1000000))
printf '%s\t%d.%d\t%d\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) "$code" >> "$log"
exit $code
