# Tests of lib/verbalize (sources under tests/verbalize/): BLEU and chrF on hand-worked values,
# decoding (beam 1 = greedy, seeded sampling, batch independence), the verbaliser's records.
add_kglm_test(verbalize_test SOURCES verbalize/verbalize_test.cpp)
if(KGLM_FUZZ)
  add_executable(fuzz_verbalizer_inputs fuzz/fuzz_verbalizer_inputs.cpp)
  target_link_libraries(fuzz_verbalizer_inputs PRIVATE kglm)
  target_link_options(fuzz_verbalizer_inputs PRIVATE -fsanitize=fuzzer)
endif()
