# Tests of lib/nn (sources under tests/nn/).
