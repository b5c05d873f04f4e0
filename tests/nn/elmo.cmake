# ELMo: options.json, character ids (and, as they land, the model and its checkpoints).
add_kglm_test(nn_elmo_test SOURCES nn/elmo_test.cpp)
if(KGLM_FUZZ)
  add_executable(fuzz_elmo_files fuzz/fuzz_elmo_files.cpp)
  target_link_libraries(fuzz_elmo_files PRIVATE kglm)
  target_link_options(fuzz_elmo_files PRIVATE -fsanitize=fuzzer)
endif()
