# lib/dist: the communicators, alone (single process) and, where the build has MPI, under
# `mpirun -np 2` (the same tests then run on two ranks).
add_kglm_test(communicator_test SOURCES dist/communicator_test.cpp)
if(KGLM_HAVE_MPI)
  add_test(NAME dist_mpi_communicator
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:communicator_test>)
  # CI runs as root, which OpenMPI refuses unless told.
  set_tests_properties(dist_mpi_communicator PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
