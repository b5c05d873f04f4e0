# safetensors tests
add_kglm_test(safetensors_test SOURCES nn/safetensors_test.cpp)

if(KGLM_FUZZ)
  add_executable(fuzz_safetensors fuzz/fuzz_safetensors.cpp)
  target_link_libraries(fuzz_safetensors PRIVATE kglm)
  target_link_options(fuzz_safetensors PRIVATE -fsanitize=fuzzer)
endif()
