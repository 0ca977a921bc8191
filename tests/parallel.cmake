# The parallel paths (core/parallel.hpp) at 1, 2 and 3 threads: BlockCD over class ranges, FISTA,
# FBPD's sample passes, prediction, the LIBSVM reader. On its own so that scripts/tsan.sh builds
# this file alone.
sparsemc_add_test(test_parallel test_parallel.cpp)
