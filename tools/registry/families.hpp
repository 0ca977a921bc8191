#pragma once
/// \file families.hpp
/// The central list of solver families known to sparsemc-train: one #include per family (each
/// file registers its solvers; see registry.hpp for how to write one). tools/CMakeLists.txt
/// reads this list and compiles each family in a translation unit of its own; including this
/// header instead registers them all from one translation unit.

#include "bcd.hpp"
#include "bcd_cst.hpp"
#include "fista.hpp"
#include "fbpd.hpp"
#include "fcbcfw.hpp"
#include "gls.hpp"
#include "scd.hpp"
#include "sdm.hpp"
