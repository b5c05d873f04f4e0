# Tests of lib/tok (sources under tests/tok/).
