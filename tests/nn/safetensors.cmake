# safetensors tests
add_kglm_test(safetensors_test SOURCES nn/safetensors_test.cpp)
add_kglm_test(torch_checkpoint_test SOURCES nn/torch_checkpoint_test.cpp)

if(KGLM_FUZZ)
  add_executable(fuzz_safetensors fuzz/fuzz_safetensors.cpp)
  target_link_libraries(fuzz_safetensors PRIVATE kglm)
  target_link_options(fuzz_safetensors PRIVATE -fsanitize=fuzzer)
  add_executable(fuzz_torch_checkpoint fuzz/fuzz_torch_checkpoint.cpp)
  target_link_libraries(fuzz_torch_checkpoint PRIVATE kglm)
  target_link_options(fuzz_torch_checkpoint PRIVATE -fsanitize=fuzzer)
endif()
