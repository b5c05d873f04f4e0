# Tests of lib/train (sources under tests/train/).
