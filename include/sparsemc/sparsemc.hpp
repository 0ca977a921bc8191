#pragma once
/// \file sparsemc.hpp
/// The one header users include: every loss, penalty, projection, solver, the model type and
/// the Eigen-only I/O. (Compressed .gz/.bz2 input lives in io/compressed.hpp and needs the
/// sparsemc::io CMake target.)
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   auto data = sparsemc::io::read_libsvm<double>("train.txt");
///   sparsemc::BlockCD<sparsemc::SquaredHinge, sparsemc::L1L2, sparsemc::TsengYun> solver(
///       {}, {.lambda = 1e-3}, {.tol = 1e-3});
///   auto result = solver.fit(data.problem<Eigen::ColMajor>());
/// \endcode

#include "version.hpp"

#include "core/callbacks.hpp"
#include "core/rng.hpp"
#include "core/status.hpp"
#include "core/stopwatch.hpp"
#include "core/traits.hpp"

#include "data/dataset.hpp"
#include "data/dense_view.hpp"
#include "data/labels.hpp"
#include "data/problem.hpp"
#include "data/sparse_view.hpp"

#include "loss/concepts.hpp"
#include "penalty/concepts.hpp"

#include "model/linear_model.hpp"
