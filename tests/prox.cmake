sparsemc_add_test(test_prox test_prox.cpp test_prox_penalties.cpp)
