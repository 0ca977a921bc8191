# Distributed fits (include/sparsemc/mpi) under mpirun with 2 and 3 ranks (3 oversubscribes this
# project's two-core machines: still correct), when MPI is installed. Open MPI refuses to run as
# root and to start more ranks than cores without being told: the environment tells it. Open MPI
# does not free what it allocates at startup, so LeakSanitizer is off here (AddressSanitizer's
# other checks stay on); the library's own code holds memory in RAII types only.
if(TARGET sparsemc::mpi)
  add_executable(test_mpi test_mpi.cpp mpi_main.cpp)
  target_link_libraries(test_mpi PRIVATE sparsemc::mpi Catch2::Catch2)
  target_compile_options(test_mpi PRIVATE ${SPARSEMC_WARNINGS} $<$<CONFIG:Release>:-O2>)
  foreach(ranks 2 3)
    add_test(NAME test_mpi_${ranks}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test_mpi>
              ${MPIEXEC_POSTFLAGS})
    set_tests_properties(test_mpi_${ranks} PROPERTIES TIMEOUT 600 PROCESSORS ${ranks}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMP_NUM_THREADS=1;ASAN_OPTIONS=detect_leaks=0")
  endforeach()
endif()
