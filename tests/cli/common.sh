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
# The peak resident memory of a command, in MB (getrusage of the children); its output goes to stderr.
peak_rss_mb() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=sys.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
}
