#pragma once
/// \file status.hpp
/// Why a solver stopped, and the information block every solver returns.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace sparsemc {

/// Why a solve ended. A bad argument is never a status: it is a `std::invalid_argument`.
enum class Status {
  converged,            ///< certified: the relative duality gap of (1) is ≤ tol
  max_iter,             ///< the epoch/iteration budget ran out first
  time_limit,           ///< the wall-clock budget ran out first
  stopped_by_callback,  ///< a callback's end_epoch hook returned true
  numerical_issue,      ///< a non-finite objective or step appeared
};

/// Lower-case name of a status, as printed by the tools and in JSON output.
constexpr std::string_view to_string(Status s) noexcept {
  switch (s) {
    case Status::converged: return "converged";
    case Status::max_iter: return "max_iter";
    case Status::time_limit: return "time_limit";
    case Status::stopped_by_callback: return "stopped_by_callback";
    case Status::numerical_issue: return "numerical_issue";
  }
  return "unknown";
}

/// The information block of a solve (ProxSuite-style): what happened, and how optimal the
/// returned model is. All values refer to objective (1) of ARCHITECTURE.md.
struct SolverInfo {
  Status status = Status::max_iter;
  std::int64_t epochs = 0;  ///< passes over the data (or outer iterations)
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< F(W) of (1) at the returned model
  /// F(W, b) − D(A) at the returned model: an upper bound on F − F* (solver/duality_gap.hpp);
  /// +∞ where no finite certificate exists (no penalty and μ = 0), NaN if not evaluated.
  double duality_gap = std::numeric_limits<double>::quiet_NaN();
  /// duality_gap / max(|F|, 10⁻¹²): `converged` means relative_gap ≤ tol, for every solver of (1).
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
  std::string measure_name;  ///< the solver's own cheap measure: "kkt_violation", "gradient_mapping", ...
  double measure = std::numeric_limits<double>::quiet_NaN();   ///< its last value (a diagnostic), relative
  std::int64_t nnz = 0;       ///< nonzero weights in W
  std::int64_t nnz_rows = 0;  ///< nonzero feature rows of W
  double seconds = 0.0;       ///< wall-clock time of the solve
  /// Duality gap evaluations during the solve (the returned model's included) and their
  /// wall-clock time, part of `seconds`: what the certificate cost.
  std::int64_t gap_evaluations = 0;
  double gap_seconds = 0.0;
};

}  // namespace sparsemc
