# FBPD (Chierchia et al.): duality gaps / KKT residuals, directional derivatives, Algorithm 2,
# LIBLINEAR -s 4, FCBCFW and ProxGradient agreement.
sparsemc_add_test(test_fbpd test_fbpd.cpp)
sparsemc_add_external_tests(test_fbpd)

# The l1 Crammer-Singer problem is a linear program: tests/scripts/fbpd_lp_check.py solves it
# with cvxopt and compares sparsemc-train --solver fbpd's objective (dna rows; golub3 when the
# shared data are present). Exit 77 (skipped) without python3-cvxopt.
if(SPARSEMC_BUILD_TOOLS AND EXISTS ${PROJECT_SOURCE_DIR}/tools/CMakeLists.txt)
  if(EXISTS /usr/bin/python3)
    set(SPARSEMC_FBPD_PYTHON /usr/bin/python3)
  else()
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    set(SPARSEMC_FBPD_PYTHON ${Python3_EXECUTABLE})
  endif()
  add_test(NAME fbpd_lp_check
    COMMAND ${SPARSEMC_FBPD_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fbpd_lp_check.py
            --train $<TARGET_FILE:sparsemc-train> --data ${PROJECT_SOURCE_DIR}/data
            --shared ${PROJECT_SOURCE_DIR}/../shared/data --work ${CMAKE_CURRENT_BINARY_DIR}/fbpd_lp_check)
  set_tests_properties(fbpd_lp_check PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
