#pragma once
/// \file sparsemc.hpp
/// The one header users include: every loss, penalty, projection, solver, the model type and
/// the Eigen-only I/O. (Compressed .gz/.bz2 input lives in io/compressed.hpp and needs the
/// sparsemc::io CMake target.)
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   auto data = sparsemc::io::read_libsvm<double>("train.txt");
///   sparsemc::ProxGradient<sparsemc::Logistic, sparsemc::L1L2> solver({}, {.lambda = 1e-3});
///   auto result = solver.fit(data.problem<Eigen::RowMajor>());
///   result.model.set_labels(data.encoder().labels());
/// \endcode

#include "version.hpp"

#include "core/callbacks.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "core/status.hpp"
#include "core/stopwatch.hpp"
#include "core/traits.hpp"

#include "data/dataset.hpp"
#include "data/dense_problem.hpp"
#include "data/dense_view.hpp"
#include "data/folds.hpp"
#include "data/labels.hpp"
#include "data/problem.hpp"
#include "data/sample_entries.hpp"
#include "data/sparse_view.hpp"

#include "loss/losses.hpp"
#include "penalty/penalties.hpp"
#include "prox/bi_simplex.hpp"
#include "prox/epigraph_max.hpp"
#include "prox/group_soft_threshold.hpp"
#include "prox/simplex.hpp"

#include "model/early_stopping.hpp"
#include "model/linear_model.hpp"
#include "model/metrics.hpp"
#include "model/staged_model.hpp"

#include "solver/bcd/block_cd.hpp"
#include "solver/duality_gap.hpp"
#include "solver/fbpd/fbpd.hpp"
#include "solver/fcbcfw/fcbcfw.hpp"
#include "solver/fista/prox_gradient.hpp"
#include "solver/gls/calibrated_ls.hpp"
#include "solver/gls/gls.hpp"
#include "solver/gls/stagewise.hpp"
#include "solver/objective.hpp"
#include "solver/path.hpp"
#include "solver/scd/scd.hpp"
#include "solver/sdm/sequential_dual.hpp"

#include "io/liblinear_model.hpp"
#include "io/libsvm.hpp"
#include "io/libsvm_reader.hpp"
#include "io/libsvm_writer.hpp"
#include "io/model_io.hpp"
#include "io/staged_model_io.hpp"
