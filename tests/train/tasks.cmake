# Fine-tuning tasks (lib/train/tasks): scores, readers, heads.
add_kglm_test(tasks_scores_test SOURCES train/tasks/scores_test.cpp)
add_kglm_test(tasks_tagged_reader_test SOURCES train/tasks/tagged_reader_test.cpp)
add_kglm_test(tasks_qa_test SOURCES train/tasks/qa_test.cpp)
add_kglm_test(tasks_slot_readers_test SOURCES train/tasks/slot_readers_test.cpp)
if(KGLM_FUZZ)
  add_executable(fuzz_tagged_reader fuzz/fuzz_tagged_reader.cpp)
  target_link_libraries(fuzz_tagged_reader PRIVATE kglm)
  target_link_options(fuzz_tagged_reader PRIVATE -fsanitize=fuzzer)
endif()
add_kglm_test(tasks_conllu_test SOURCES train/tasks/conllu_test.cpp)
add_kglm_test(frozen_spanning_tree_test SOURCES train/frozen/spanning_tree_test.cpp)
add_kglm_test(frozen_esim_test SOURCES train/frozen/esim_test.cpp)
if(KGLM_FUZZ)
  foreach(target fuzz_conllu fuzz_sentence_tsv fuzz_task_readers)
    add_executable(${target} fuzz/${target}.cpp)
    target_link_libraries(${target} PRIVATE kglm)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  endforeach()
endif()
add_kglm_test(tasks_example_readers_test SOURCES train/tasks/example_readers_test.cpp)
add_test(NAME cli_finetune COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/finetune.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_finetune PROPERTIES LABELS "cli;fixtures" SKIP_RETURN_CODE 77)
add_test(NAME cli_finetune_mpi COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/finetune-mpi.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_finetune_mpi PROPERTIES LABELS "cli;fixtures;mpi" SKIP_RETURN_CODE 77
                     PROCESSORS 2 ENVIRONMENT "${KGLM_MPI_TEST_ASAN}")
# cli_frozen keeps its ELMo and its pos and parse runs in frozen-runs/, which reference_udeval scores
# with UD's evaluator (the fixture frozen_runs).
add_test(NAME cli_frozen COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/frozen.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/frozen-runs)
set_tests_properties(cli_frozen PROPERTIES LABELS "cli;fixtures" SKIP_RETURN_CODE 77 PROCESSORS 2
                     FIXTURES_SETUP frozen_runs)
