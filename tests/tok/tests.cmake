# Tests of lib/tok (sources under tests/tok/).
add_kglm_test(tok_test SOURCES tok/tok_test.cpp)
add_kglm_test(tok_fixtures_test SOURCES tok/tok_fixtures_test.cpp LABELS fixtures)
