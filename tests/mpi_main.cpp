// The runner of test_mpi under mpirun: MPI around Catch2's session. Every rank runs every case
// (the cases are collective); a rank prints its failures prefixed by the reporter as usual, and
// each exits with the worst status of all, so that mpirun and ctest see one verdict.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <sparsemc/mpi/communicator.hpp>

int main(int argc, char** argv) {
  sparsemc::mpi::Environment environment(argc, argv);
  const sparsemc::mpi::Communicator world;
  const int status = Catch::Session().run(argc, argv);
  return world.max(status);
}
