# lib/dist: the communicators, alone (single process) and, where the build has MPI, under
# `mpirun -np 2` (the same tests then run on two ranks).
add_kglm_test(communicator_test SOURCES dist/communicator_test.cpp)
add_kglm_test(nccl_test SOURCES dist/nccl_test.cpp)
if(KGLM_HAVE_MPI)
  add_test(NAME dist_mpi_communicator
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:communicator_test>)
  # CI runs as root, which OpenMPI refuses unless told.
  set_tests_properties(dist_mpi_communicator PROPERTIES LABELS mpi PROCESSORS 2
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;${KGLM_MPI_TEST_ASAN}")
endif()
if(KGLM_HAVE_MPI AND KGLM_HAVE_NCCL AND KGLM_HAVE_CUDA)
  # NCCL with world size 1 on this machine's GPU (skips without one).
  add_test(NAME dist_nccl_world1 COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 $<TARGET_FILE:nccl_test>)
  set_tests_properties(dist_nccl_world1 PROPERTIES LABELS "mpi;cuda"
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;${KGLM_MPI_TEST_ASAN}")
endif()
