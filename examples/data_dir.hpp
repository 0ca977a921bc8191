#pragma once
/// \file data_dir.hpp
/// Where the examples find the data shipped in the repository (dna.scale, dna.scale.t): the
/// environment's SPARSEMC_REPO_DATA when set, else the data/ folder of the source tree they
/// were built from. That path is compiled into one generated object (data_dir.cpp.in), so the
/// examples' own objects are the same in every clone.

#include <cstdlib>
#include <string>

namespace sparsemc_examples {

/// The source tree's data/ folder (defined in the generated data_dir.cpp).
extern const char* const source_data_dir;

inline std::string data_dir() {
  const char* from_environment = std::getenv("SPARSEMC_REPO_DATA");
  return from_environment != nullptr && *from_environment != '\0' ? from_environment : source_data_dir;
}

}  // namespace sparsemc_examples
