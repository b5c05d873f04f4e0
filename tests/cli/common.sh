# Sourced by the CLI test scripts: skip without fixtures, a scratch directory, pass/fail helpers.
# Usage: source common.sh FIXTURE_FILE_OR_DIR
if [ ! -e "$1" ]; then
  echo "fixtures not found at $1: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
stat_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))" "$1" "$2"; }
