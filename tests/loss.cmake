# Loss policies: values, gradients, curvature, bounds, subgradients, the Crammer–Singer prox.
sparsemc_add_test(test_loss test_loss.cpp)
