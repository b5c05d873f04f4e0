"""What the reference comparisons share: where the tools and fixtures are, running a tool, skipping,
and a one-line report per check (what was compared, on how much data, the largest difference)."""
import os
import subprocess
import sys

BIN = os.environ.get("KGLM_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
FIXTURES = os.environ.get("KGLM_FIXTURES", os.path.join(os.path.dirname(__file__), "../../../shared/fixtures"))
SKIP = 77


def tool(name):
    return os.path.join(BIN, name)


def run(args, **kwargs):
    """Runs a kglm tool; fails the test with its stderr when it fails."""
    p = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, args))} (exit {p.returncode})\n{p.stderr}")
    return p


def fixture(*parts):
    """The path of a fixture, or None when ../shared/fixtures lacks it."""
    path = os.path.join(FIXTURES, *parts)
    return path if os.path.exists(path) else None


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


class Report:
    """Collects the largest difference of each check and fails at the end if one passed its bound."""

    def __init__(self):
        self.failures = []

    def check(self, what, amount, largest, bound):
        ok = largest <= bound
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {amount}; largest difference {largest:.3g} (bound {bound:g})")
        if not ok:
            self.failures.append(what)

    def fail(self, message):
        print(f"FAIL {message}")
        self.failures.append(message)

    def finish(self):
        if self.failures:
            sys.exit(f"{len(self.failures)} check(s) failed: {'; '.join(self.failures)}")
        print("all checks passed")
