# LinearModel scoring, metrics, native model format and LIBLINEAR model interchange.
sparsemc_add_test(test_model test_model.cpp)
sparsemc_add_external_tests(test_model)
