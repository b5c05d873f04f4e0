add_kglm_test(trainer_test SOURCES train/trainer_test.cpp)
add_kglm_test(trainer_class_test SOURCES train/trainer_class_test.cpp)
add_kglm_test(tensorboard_events_test SOURCES train/tensorboard_events_test.cpp)
add_kglm_test(objectives_test SOURCES train/objectives_test.cpp)
add_test(NAME cli_pretrain COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/pretrain.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_pretrain PROPERTIES LABELS "cli;fixtures" SKIP_RETURN_CODE 77)
add_test(NAME cli_objectives COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/objectives.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR} $<TARGET_FILE:objectives_test>)
set_tests_properties(cli_objectives PROPERTIES LABELS "cli;fixtures" SKIP_RETURN_CODE 77)
add_test(NAME cli_pretrain_mpi COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/pretrain-mpi.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_pretrain_mpi PROPERTIES LABELS "cli;fixtures;mpi" SKIP_RETURN_CODE 77
                     PROCESSORS 2 ENVIRONMENT "${KGLM_MPI_TEST_ASAN}")
add_test(NAME cli_pretrain_stream COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/pretrain-stream.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_pretrain_stream PROPERTIES LABELS "cli;fixtures;mpi" SKIP_RETURN_CODE 77
                     PROCESSORS 2 ENVIRONMENT "KGLM_TEST_SANITIZED=$<$<BOOL:${KGLM_SANITIZE}>:1>;${KGLM_MPI_TEST_ASAN}")
add_test(NAME cli_slurm_multinode COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/slurm-multinode.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_slurm_multinode PROPERTIES LABELS "cli;fixtures;mpi" SKIP_RETURN_CODE 77
                     PROCESSORS 2 ENVIRONMENT "${KGLM_MPI_TEST_ASAN}")
add_test(NAME cli_padding_free COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/padding-free.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_padding_free PROPERTIES LABELS "cli;fixtures" SKIP_RETURN_CODE 77)
add_kglm_test(elmo_windows_test SOURCES train/elmo_windows_test.cpp)
add_test(NAME cli_elmo_train COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/elmo-train.sh ${PROJECT_BINARY_DIR}/bin
         ${KGLM_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_elmo_train PROPERTIES LABELS "cli;fixtures;mpi" SKIP_RETURN_CODE 77
                     PROCESSORS 2 ENVIRONMENT "${KGLM_MPI_TEST_ASAN}")
