# Tests of lib/verbalize (sources under tests/verbalize/): BLEU and chrF on hand-worked values,
# decoding (beam 1 = greedy, seeded sampling, batch independence), the verbaliser's records.
add_kglm_test(verbalize_test SOURCES verbalize/verbalize_test.cpp)
