# Tests of the command-line tools: python scripts in tests/tools/ run the built sparsemc-train,
# sparsemc-predict and sparsemc-eval (passed as $<TARGET_FILE:...>) on data/dna.scale(.t) and
# on small files they write. A script exits 77 (reported as skipped) when a peer it needs —
# numpy/scipy, scikit-learn, liblinear-predict — is absent.
if(SPARSEMC_BUILD_TOOLS AND EXISTS ${PROJECT_SOURCE_DIR}/tools/CMakeLists.txt)
  if(EXISTS /usr/bin/python3)
    set(SPARSEMC_TEST_PYTHON /usr/bin/python3)
  else()
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    set(SPARSEMC_TEST_PYTHON ${Python3_EXECUTABLE})
  endif()
  set(SPARSEMC_TOOL_ARGS
    --train $<TARGET_FILE:sparsemc-train> --predict $<TARGET_FILE:sparsemc-predict>
    --eval $<TARGET_FILE:sparsemc-eval> --data ${PROJECT_SOURCE_DIR}/data)
  foreach(script cli json roundtrip eval liblinear sklearn staged matrix robust habits)
    add_test(NAME tools_${script}
      COMMAND ${SPARSEMC_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_${script}.py
              ${SPARSEMC_TOOL_ARGS} --work ${CMAKE_CURRENT_BINARY_DIR}/tools_work/${script})
    set_tests_properties(tools_${script} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
  # sparsemc-train-mpi against sparsemc-train, under Open MPI's launcher.
  if(TARGET sparsemc::mpi)
    add_test(NAME tools_mpi
      COMMAND ${SPARSEMC_TEST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_mpi.py ${SPARSEMC_TOOL_ARGS}
              --train-mpi $<TARGET_FILE:sparsemc-train-mpi> --mpirun ${MPIEXEC_EXECUTABLE}
              --work ${CMAKE_CURRENT_BINARY_DIR}/tools_work/mpi)
    set_tests_properties(tools_mpi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 PROCESSORS 2)
  endif()
  # The benchmark harness in its smoke form (seconds, on data/dna.scale); it times solvers, so
  # not in sanitizer builds.
  if(NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
    add_test(NAME tools_bench_compare_smoke
      COMMAND ${SPARSEMC_TEST_PYTHON} ${PROJECT_SOURCE_DIR}/bench/compare --smoke
              --train $<TARGET_FILE:sparsemc-train> --eval $<TARGET_FILE:sparsemc-eval>
              --out ${CMAKE_CURRENT_BINARY_DIR}/tools_work/compare)
    set_tests_properties(tools_bench_compare_smoke PROPERTIES TIMEOUT 600)
  endif()
endif()
