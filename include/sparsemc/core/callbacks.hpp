#pragma once
/// \file callbacks.hpp
/// Per-epoch callbacks, ensmallen style: a callback is any object with some of the optional
/// hooks below; a hook it lacks costs nothing (detected at compile time); a hook returning
/// `true` stops the solve with `Status::stopped_by_callback`.
///
///     void begin();                                        // before the first epoch
///     bool end_epoch(const EpochReport& report);           // after every epoch
///     bool end_epoch(const EpochReport& report, const Model& current);   // ditto, with the model
///     void end(const SolverInfo& info);                    // once, after the solve
///
/// The model is built for the second form only when some callback asks for it.
///
/// \code
///   sparsemc::History history;
///   auto result = solver.fit(problem, sparsemc::ProgressPrinter{std::cerr}, history);
///   for (const auto& epoch : history.epochs) std::printf("%g\n", epoch.objective);
/// \endcode

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

#include "status.hpp"

namespace sparsemc {

/// What a solver reports after each epoch. Values refer to objective (1).
struct EpochReport {
  std::int64_t epoch = 0;
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< NaN when not evaluated
  double measure = std::numeric_limits<double>::quiet_NaN();    ///< the solver's cheap measure, relative
  std::int64_t nnz_rows = 0;  ///< nonzero feature rows of the current W (−1 if unknown)
  double seconds = 0.0;       ///< since the solve started
  /// Relative duality gap of (1) when it was evaluated in this epoch, else NaN.
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
};

/// Prints one line per epoch (`epoch objective measure nnz_rows seconds`) to a stream.
struct ProgressPrinter {
  std::ostream* out;
  explicit ProgressPrinter(std::ostream& stream) : out(&stream) {}
  bool end_epoch(const EpochReport& r) {
    *out << "epoch " << r.epoch << "  objective " << r.objective << "  measure " << r.measure;
    if (!std::isnan(r.relative_gap)) *out << "  relative_gap " << r.relative_gap;
    *out << "  nnz_rows " << r.nnz_rows << "  t " << r.seconds << "s\n";
    return false;
  }
};

/// Records every epoch report, e.g. for an objective-versus-time plot.
struct History {
  std::vector<EpochReport> epochs;
  bool end_epoch(const EpochReport& r) {
    epochs.push_back(r);
    return false;
  }
};

namespace detail {

template <class Callback>
void call_begin(Callback& cb) {
  if constexpr (requires { cb.begin(); }) cb.begin();
}

template <class Callback>
void call_end(Callback& cb, const SolverInfo& info) {
  if constexpr (requires { cb.end(info); }) cb.end(info);
}

template <class Callback, class Model>
constexpr bool wants_model = requires(Callback& cb, const EpochReport& r, const Model& m) {
  { cb.end_epoch(r, m) } -> std::convertible_to<bool>;
};

}  // namespace detail

/// Runs `begin` on every callback.
template <class... Callbacks>
void notify_begin(Callbacks&... cbs) {
  (detail::call_begin(cbs), ...);
}

/// Runs `end_epoch` on every callback; `make_model()` is called at most once, and only if a
/// callback takes the model. Returns true if any callback asked to stop (all are still called).
template <class MakeModel, class... Callbacks>
bool notify_end_epoch(const EpochReport& report, MakeModel&& make_model, Callbacks&... cbs) {
  using Model = decltype(make_model());
  constexpr bool any_wants_model = (detail::wants_model<Callbacks, Model> || ... || false);
  bool stop = false;
  if constexpr (any_wants_model) {
    const Model model = make_model();
    auto one = [&](auto& cb) {
      using Cb = std::remove_reference_t<decltype(cb)>;
      if constexpr (detail::wants_model<Cb, Model>) {
        stop = static_cast<bool>(cb.end_epoch(report, model)) || stop;
      } else if constexpr (requires { cb.end_epoch(report); }) {
        stop = static_cast<bool>(cb.end_epoch(report)) || stop;
      }
    };
    (one(cbs), ...);
  } else {
    auto one = [&](auto& cb) {
      if constexpr (requires { cb.end_epoch(report); }) {
        stop = static_cast<bool>(cb.end_epoch(report)) || stop;
      }
    };
    (one(cbs), ...);
  }
  return stop;
}

/// Runs `end` on every callback.
template <class... Callbacks>
void notify_end(const SolverInfo& info, Callbacks&... cbs) {
  (detail::call_end(cbs, info), ...);
}

}  // namespace sparsemc
