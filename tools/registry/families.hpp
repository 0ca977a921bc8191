#pragma once
/// \file families.hpp
/// The central list of solver families known to sparsemc-train: one #include per family (each
/// file registers its solvers; see registry.hpp for how to write one). The order here is the
/// order of the --help listing.

#include "fista.hpp"
#include "fcbcfw.hpp"
#include "gls.hpp"
#include "scd.hpp"
