# Sources of lib/dist, relative to lib/: the communicator interface, its single-process form, and
# the MPI and NCCL forms where the build has them (KGLM_HAVE_MPI, KGLM_HAVE_NCCL with CUDA).
set(KGLM_DIST_SOURCES
  dist/comm_bench.cpp
  dist/communicator.cpp
  dist/single_communicator.cpp
  dist/gradient_buckets.cpp
)
if(KGLM_HAVE_MPI)
  list(APPEND KGLM_DIST_SOURCES dist/mpi_communicator.cpp)
  if(KGLM_HAVE_NCCL AND KGLM_HAVE_CUDA)
    list(APPEND KGLM_DIST_SOURCES dist/nccl_communicator.cpp)
  endif()
endif()

# Links MPI and NCCL into `target` and tells its sources which communicators they have.
function(kglm_link_dist target)
  if(NOT KGLM_HAVE_MPI)
    return()
  endif()
  target_compile_definitions(${target} PRIVATE KGLM_WITH_MPI=1)
  target_link_libraries(${target} PUBLIC MPI::MPI_CXX)
  if(KGLM_HAVE_NCCL AND KGLM_HAVE_CUDA)
    target_compile_definitions(${target} PRIVATE KGLM_WITH_NCCL=1)
    target_include_directories(${target} SYSTEM PRIVATE ${NCCL_INCLUDE_DIR})
    target_link_libraries(${target} PUBLIC ${NCCL_LIBRARY})
  endif()
endfunction()
