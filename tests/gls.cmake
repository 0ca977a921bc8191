# Generalized and calibrated least squares, stagewise regression (Agarwal et al. 2014).
sparsemc_add_test(test_gls test_gls.cpp)

# Test helper: fits GLS on a LIBSVM file and prints objective (1) as JSON; the script compares it
# with scikit-learn's multinomial logistic regression (ridge, no intercept) on dna.
add_executable(gls_driver gls_driver.cpp)
target_link_libraries(gls_driver PRIVATE sparsemc::sparsemc)
target_compile_options(gls_driver PRIVATE ${SPARSEMC_WARNINGS})
if(EXISTS /usr/bin/python3)
  add_test(NAME check_gls_vs_sklearn
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_gls_vs_sklearn.py
                   --driver $<TARGET_FILE:gls_driver> --data ${PROJECT_SOURCE_DIR}/data/dna.scale)
  set_tests_properties(check_gls_vs_sklearn PROPERTIES SKIP_RETURN_CODE 77)
endif()
