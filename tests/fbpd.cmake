# FBPD (Chierchia et al.): duality gaps / KKT residuals, directional derivatives, Algorithm 2,
# LIBLINEAR -s 4, FCBCFW and ProxGradient agreement.
sparsemc_add_test(test_fbpd test_fbpd.cpp)
