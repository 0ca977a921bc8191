# Block coordinate descent (Blondel, Seki & Uehara 2013): caches, Lipschitz constants, solver
# properties, the regularisation path, and agreement with ProxGradient (the hidden [shared]
# case reads ../shared/data, partly .bz2: hence sparsemc::io when available).
sparsemc_add_test(test_bcd test_bcd.cpp test_bcd_agreement.cpp)
sparsemc_add_external_tests(test_bcd)
if(TARGET sparsemc::io)
  target_link_libraries(test_bcd PRIVATE sparsemc::io)
endif()
