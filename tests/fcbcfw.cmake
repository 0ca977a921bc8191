# PD-Sparse's fully-corrective block-coordinate Frank–Wolfe: duality gaps, brute force, LIBLINEAR.
sparsemc_add_test(test_fcbcfw test_fcbcfw.cpp)
sparsemc_add_external_tests(test_fcbcfw)
