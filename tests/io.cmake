# LIBSVM / SVMlight reader and writer; with sparsemc::io also .gz and .bz2 files.
sparsemc_add_test(test_io test_io.cpp)
sparsemc_add_external_tests(test_io)
if(TARGET sparsemc::io)
  target_link_libraries(test_io PRIVATE sparsemc::io)
endif()
