#pragma once
/// \file version.hpp
/// The library version (semantic versioning; matches the CMake package version).

#define SPARSEMC_VERSION_MAJOR 0
#define SPARSEMC_VERSION_MINOR 1
#define SPARSEMC_VERSION_PATCH 0
#define SPARSEMC_VERSION_STRING "0.1.0"
