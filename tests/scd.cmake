# Stochastic coordinate descent (Tao et al.): kernels, RDA vs an LP (test_scd.cpp); the smooth
# variants vs FISTA, BlockCD and LIBLINEAR -s 5 (test_scd_solvers.cpp).
sparsemc_add_test(test_scd test_scd.cpp test_scd_solvers.cpp)
sparsemc_add_external_tests(test_scd)
