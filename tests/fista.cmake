# Objective (1) and the reference proximal-gradient solver (FISTA).
sparsemc_add_test(test_fista test_fista.cpp test_duality_gap.cpp)

# Test helper: fits ProxGradient on a LIBSVM file and prints objective (1) as JSON; the script
# below compares it with scikit-learn's multinomial logistic regression (ridge) on dna.
add_executable(fista_driver fista_driver.cpp)
target_link_libraries(fista_driver PRIVATE sparsemc::sparsemc)
target_compile_options(fista_driver PRIVATE ${SPARSEMC_WARNINGS})
if(EXISTS /usr/bin/python3)
  set(SPARSEMC_FISTA_PYTHON /usr/bin/python3)
else()
  find_package(Python3 COMPONENTS Interpreter)
  set(SPARSEMC_FISTA_PYTHON ${Python3_EXECUTABLE})
endif()
if(SPARSEMC_FISTA_PYTHON)
  add_test(NAME check_fista_vs_sklearn
           COMMAND ${SPARSEMC_FISTA_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_fista_vs_sklearn.py
                   --driver $<TARGET_FILE:fista_driver> --data ${PROJECT_SOURCE_DIR}/data/dna.scale)
  set_tests_properties(check_fista_vs_sklearn PROPERTIES SKIP_RETURN_CODE 77)
endif()
