#pragma once
/// \file engine.hpp
/// The state and the loop of one FC-BCFW solve (PD-Sparse Algorithm 1); fcbcfw.hpp holds the
/// public class, its options and the mapping to objective (1).
///
/// Scales. Internally everything is in PD-Sparse's scale: (1)/μ is
///     P(W) = ½‖W‖² + τ‖W‖₁ + Σ_i C_i ℓ_i(Wᵀx_i),   τ = λ/μ,  C_i = c_i/(μn),
/// with dual (14) min_α G(α) = ½‖S_τ(Xᵀα)‖² + Σ_i e_iᵀα^i over α^i ∈ 𝒞_i (16) and bound C_i.
/// Reported values are in (1)'s scale: F = μP, D = −μG (a lower bound on F* for every α in
/// 𝒞, docs/math.md "PD-Sparse dual in (1)"), and the relative duality gap is that of (1),
/// (F − D)/max(|F|, 10⁻¹²) (solver/duality_gap.hpp).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../model/linear_model.hpp"
#include "../../../prox/bi_simplex.hpp"
#include "../../../prox/simplex.hpp"
#include "../../duality_gap.hpp"
#include "../../objective.hpp"
#include "dense_rows.hpp"
#include "feature_rows.hpp"
#include "scores.hpp"

namespace sparsemc::detail::fcbcfw {

/// What the engine needs from the options, resolved (defaults filled in).
struct Settings {
  double lambda = 0.0;  ///< λ of (1)
  double mu = 1.0;      ///< μ of (1), > 0
  double tol = 1e-3;
  std::int64_t max_epochs = 1000;
  double time_limit = 0.0;
  std::uint64_t seed = 0;
  bool bi_stochastic = false;   ///< search (24)–(25) instead of (20)
  int n_parts = 1;              ///< ν of (24)
  double speedup = 1.0;         ///< d_i / d̃_i of (25)
  bool refit_l2 = false;        ///< §4.3 post-solve
  int warm_start_labels = 0;    ///< negatives seeded per sample from an initial model
  std::int64_t gap_every = 0;   ///< evaluate the gap every this many epochs; 0 = by work (see run)
  int labels_per_search = 1;    ///< labels the search returns (initially)
  bool adapt_labels = true;     ///< §4.4: double it while the search outweighs the rest 2:1
  int active_sweeps = 0;        ///< at most this many sweeps over the active sets per epoch; −1 = automatic
  bool dense_rows = false;      ///< V and W as D×K arrays (exact search only; see feature_rows.hpp)
  bool arc_search = true;       ///< step 4 of the sweeps along the projection arc when λ > 0 (step_along_arc)
  int team = 1;                 ///< threads of the certificate's pass over the samples (primal)
};

/// One dual variable α_ik of a sample's active set 𝒜_i.
struct ActiveEntry {
  ClassIndex cls;
  double alpha;
};

/// The exact primal parts at the current W: loss = (1/n) Σ c_i ℓ_i, l1 = ‖W‖₁, squared = ‖W‖².
struct PrimalParts {
  double loss = 0.0;
  double l1 = 0.0;
  double squared = 0.0;
  std::int64_t nnz = 0;
  std::int64_t nnz_rows = 0;
};

/// A LinearModel from W in compressed rows over all d features (`ptr` has d + 1 entries; row j
/// holds `classes[ptr[j] .. ptr[j+1])`, increasing, with `weights`), labels 0..K−1: the
/// nonempty rows become the model's support, the entries are moved, not densified.
template <RealScalar Scalar>
LinearModel<Scalar> model_from_feature_rows(std::int64_t n_features, ClassIndex n_classes,
                                            const std::vector<std::int64_t>& ptr, std::vector<ClassIndex> classes,
                                            std::vector<Scalar> weights) {
  std::vector<std::int64_t> support, row_start{0};
  for (std::int64_t j = 0; j < n_features; ++j) {
    const auto end = ptr[static_cast<std::size_t>(j) + 1];
    if (end == row_start.back()) continue;
    support.push_back(j);
    row_start.push_back(end);
  }
  std::vector<Label> labels(static_cast<std::size_t>(n_classes));
  for (std::size_t k = 0; k < labels.size(); ++k) labels[k] = static_cast<Label>(k);
  return LinearModel<Scalar>(n_features, std::move(support), std::move(row_start), std::move(classes),
                             std::move(weights), typename LinearModel<Scalar>::Vector(), std::move(labels));
}

/// X's rows as the engine reads them, by `outer(i)`: a CSR view, or a dense X's rows gathered
/// as CSR rows by `team` threads at most.
template <RealScalar Scalar, StorageIndex Index>
CsrView<Scalar, Index> sample_rows(const CsrProblem<Scalar, Index>& problem, int /*team*/) {
  return problem.X;
}
template <RealScalar Scalar>
GatheredDenseRows<Scalar> sample_rows(const DenseProblem<Scalar>& problem, int team) {
  return {problem.X, team};
}

template <TrainingProblem Prob>
class Engine {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  using Rows = decltype(sample_rows(std::declval<const Prob&>(), 1));

 public:
  /// `rows`: sample_rows(problem, settings.team).
  Engine(const Prob& problem, Rows rows, const Settings& settings)
      : X_(std::move(rows)), y_(problem.y), s_(settings), rng_(settings.seed) {
    const auto n = static_cast<std::size_t>(X_.rows());
    const ClassIndex K = y_.n_classes();
    tau_ = s_.lambda / s_.mu;
    labels_per_search_ = static_cast<std::size_t>(std::max(1, s_.labels_per_search));
    rows_.reset(static_cast<std::size_t>(X_.cols()), K, s_.bi_stochastic ? s_.n_parts : 1, tau_, rng_,
                s_.dense_rows ? FeatureRows<Scalar>::Layout::dense : FeatureRows<Scalar>::Layout::hashed);
    scores_.resize(static_cast<std::size_t>(std::max(1, s_.team)));
    for (ScoreBuffer& buffer : scores_) buffer.reset(K, rows_);
    bound_.resize(n);
    curvature_.resize(n);
    active_.resize(n);
    double f0 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto positives = y_[i];
      const bool has_pair = !positives.empty() && positives.size() < static_cast<std::size_t>(K);
      const double c = static_cast<double>(problem.weight(static_cast<Index>(i)));
      bound_[i] = has_pair ? c / (s_.mu * static_cast<double>(n)) : 0.0;
      if (has_pair) f0 += c;
      double q = 0.0;
      for (auto [j, x] : X_.outer(static_cast<Index>(i))) q += static_cast<double>(x) * static_cast<double>(x);
      curvature_[i] = q > 0.0 ? q : 1.0;  // an empty x_i: any Q > 0 solves (21) (scores are 0)
      active_[i].reserve(positives.size() + 2);
      for (ClassIndex k : positives) active_[i].push_back({k, 0.0});
    }
    f0_ = f0 / static_cast<double>(n);
  }

  /// Seeds every 𝒜_i with the (at most warm_start_labels) negatives that violate the margin
  /// most under `initial`'s scores (α stays 0: a primal point does not determine α).
  void seed_active_sets(const LinearModel<Scalar>& initial) {
    if (s_.warm_start_labels <= 0) return;
    const auto K = static_cast<std::size_t>(y_.n_classes());
    std::vector<double> z(K);
    std::vector<ClassIndex> candidates;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (bound_[i] == 0.0) continue;
      std::fill(z.begin(), z.end(), 0.0);
      if (initial.has_intercept())
        for (std::size_t k = 0; k < K; ++k) z[k] = static_cast<double>(initial.intercept()[static_cast<Eigen::Index>(k)]);
      for (auto [j, x] : X_.outer(static_cast<Index>(i))) {
        const std::int64_t r = initial.row_of_feature(static_cast<std::int64_t>(j));
        if (r < 0) continue;
        for (auto [k, w] : initial.row(static_cast<std::size_t>(r))) z[static_cast<std::size_t>(k)] += static_cast<double>(x) * static_cast<double>(w);
      }
      const auto positives = y_[i];
      double lowest = std::numeric_limits<double>::infinity();
      for (ClassIndex p : positives) lowest = std::min(lowest, z[static_cast<std::size_t>(p)]);
      candidates.clear();
      std::size_t next = 0;
      for (std::size_t k = 0; k < K; ++k) {
        if (next < positives.size() && static_cast<std::size_t>(positives[next]) == k) {
          ++next;
          continue;
        }
        if (1.0 + z[k] - lowest > 0.0) candidates.push_back(static_cast<ClassIndex>(k));
      }
      const auto keep = std::min(candidates.size(), static_cast<std::size_t>(s_.warm_start_labels));
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                        [&](ClassIndex a, ClassIndex b) {
                          return z[static_cast<std::size_t>(a)] > z[static_cast<std::size_t>(b)] ||
                                 (z[static_cast<std::size_t>(a)] == z[static_cast<std::size_t>(b)] && a < b);
                        });
      for (std::size_t r = 0; r < keep; ++r) active_[i].push_back({candidates[r], 0.0});
    }
  }

  /// Runs Algorithm 1 (then the §4.3 refit if asked). `end_epoch(report)` is called once per
  /// epoch and returns true to stop.
  ///
  /// The exact gap costs one pass of sparse scores over all samples. It is evaluated at the end
  /// of an epoch when `gap_every` epochs have passed or, with gap_every = 0, when the work done
  /// since the last evaluation (weight entries read by the searches, plus entries of V read or
  /// written) is at least twice the work of that evaluation — so the checks take at most about
  /// a third of the time, and with the exact search (whose epoch reads as much as a check) every
  /// other epoch is checked. Work is counted, not timed, so the schedule is reproducible. The last epoch
  /// is always evaluated — except when `end_epoch` stops the solve and `keeps_best` says the
  /// caller returns a model kept by its callback instead of this iterate — ; reports of the
  /// other epochs carry NaN objective and measure.
  template <class EndEpoch>
  SolverInfo run(EndEpoch&& end_epoch, bool keeps_best = false) {
    Stopwatch clock;
    info_ = SolverInfo{};
    info_.measure_name = "duality_gap";
    checks_ = GapChecks{};
    gap_spent_ = {};
    order_.resize(static_cast<std::size_t>(X_.rows()));
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    for (std::int64_t epoch = 1;; ++epoch) {
      EpochEnd end;
      end.out_of_time = run_epoch(clock);
      end.last = end.out_of_time || epoch >= s_.max_epochs;
      info_.epochs = epoch;
      bool finite = true;
      if (end.last || gap_due(epoch) || f0_ == 0.0) finite = evaluate_gap(epoch);
      info_.seconds = clock.seconds();
      if (!finite) {
        info_.status = Status::numerical_issue;
        break;
      }
      end.stop = end_epoch(report(epoch));
      if (const std::optional<Status> status = verdict(epoch, end, keeps_best)) {
        info_.status = *status;
        break;
      }
    }
    info_.seconds = clock.seconds();
    gap_spent_.record_into(info_);
    return info_;
  }

  /// F − D of (1) at the last evaluation (the returned iterate when run() evaluated it last).
  [[nodiscard]] const DualityGap& certificate() const noexcept { return certificate_; }

  /// The best lower bound on F* known: the largest D(α) seen, the current α's included (outside
  /// the refit). Costs one pass over the stored entries of V.
  [[nodiscard]] double dual_bound() const noexcept {
    return refitting_ ? best_dual_ : std::max(best_dual_, current_dual());
  }

  /// The current W as a LinearModel (its nonzero entries only; labels are the class indices).
  [[nodiscard]] LinearModel<Scalar> model() const {
    std::vector<std::int64_t> ptr;
    std::vector<ClassIndex> cls;
    std::vector<Scalar> w;
    export_weights(ptr, cls, w);
    return model_from_feature_rows<Scalar>(static_cast<std::int64_t>(X_.cols()), y_.n_classes(), ptr, std::move(cls),
                                           std::move(w));
  }

  /// W in compressed sparse rows over features (classes increasing within a row).
  void export_weights(std::vector<std::int64_t>& ptr, std::vector<ClassIndex>& cls, std::vector<Scalar>& w) const {
    const auto d = static_cast<std::size_t>(X_.cols());
    ptr.assign(d + 1, 0);
    cls.clear();
    w.clear();
    std::vector<std::pair<ClassIndex, Scalar>> row;
    std::size_t current = 0;
    const auto flush = [&](std::size_t upto) {
      std::sort(row.begin(), row.end());
      for (const auto& [k, v] : row)
        if (v != Scalar(0)) {
          cls.push_back(k);
          w.push_back(v);
        }
      row.clear();
      for (; current < upto; ++current) ptr[current + 1] = static_cast<std::int64_t>(cls.size());
    };
    rows_.for_each_list([&](std::size_t j, std::span<const WeightEntry<Scalar>> list) {
      if (j != current) flush(j);
      for (const auto& e : list) row.emplace_back(e.cls, e.w);
    });
    flush(d);
  }

  /// α in compressed sparse rows over samples, PD-Sparse's scale (α^i ∈ 𝒞_i with bound C_i).
  void export_dual(std::vector<std::int64_t>& ptr, std::vector<ClassIndex>& cls, std::vector<double>& alpha) const {
    ptr.assign(active_.size() + 1, 0);
    cls.clear();
    alpha.clear();
    std::vector<ActiveEntry> row;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      row = active_[i];
      std::sort(row.begin(), row.end(), [](const ActiveEntry& a, const ActiveEntry& b) { return a.cls < b.cls; });
      for (const auto& e : row)
        if (e.alpha != 0.0) {
          cls.push_back(e.cls);
          alpha.push_back(e.alpha);
        }
      ptr[i + 1] = static_cast<std::int64_t>(cls.size());
    }
  }

  /// F of (1) for any model with this problem's shape (dense K-vector scores per sample:
  /// O(nnz(X)·K); used once, for a model handed back by a callback).
  [[nodiscard]] double objective_of(const LinearModel<Scalar>& model) const {
    const auto K = static_cast<Eigen::Index>(y_.n_classes());
    Eigen::Matrix<double, 1, Eigen::Dynamic> z(K);
    double loss = 0.0;
    for (std::size_t i = 0; i < bound_.size(); ++i) {
      if (bound_[i] == 0.0) continue;
      z.setZero();
      for (auto [j, x] : X_.outer(static_cast<Index>(i))) {
        const std::int64_t r = model.row_of_feature(static_cast<std::int64_t>(j));
        if (r < 0) continue;
        for (auto [k, w] : model.row(static_cast<std::size_t>(r))) z[k] += static_cast<double>(x) * static_cast<double>(w);
      }
      const auto positives = y_[i];
      double lowest = std::numeric_limits<double>::infinity();
      for (ClassIndex k : positives) {
        lowest = std::min(lowest, z[k]);
        z[k] = -std::numeric_limits<double>::infinity();  // leave the negatives for the max
      }
      loss += bound_[i] * std::max(0.0, 1.0 + z.maxCoeff() - lowest);
    }
    const auto w = model.weights().template cast<double>();
    return s_.mu * loss + s_.lambda * w.cwiseAbs().sum() + 0.5 * s_.mu * w.squaredNorm();
  }

 private:
  /// The schedule of the exact gap evaluations (run's comment) and the last one's gap.
  struct GapChecks {
    std::uint64_t work = 0;        ///< work counted since the last evaluation
    std::uint64_t check_work = 0;  ///< the work of the last evaluation (its scores' entries)
    std::int64_t last = 0;         ///< the epoch of the last evaluation
    double gap = std::numeric_limits<double>::quiet_NaN();  ///< the current phase's relative gap then
  };

  /// How an epoch ends: out of time, the last epoch (time or max_epochs), stopped by the callback.
  struct EpochEnd {
    bool out_of_time = false;
    bool last = false;
    bool stop = false;
  };

  /// One epoch of Algorithm 1: a searching pass over the samples (fresh random order), the
  /// §4.4 adaptation, the fully corrective sweeps, then (outside the refit) the compaction of
  /// V, whose work counts towards the next epoch. Returns true when out of time.
  bool run_epoch(const Stopwatch& clock) {
    double pass_decrease = 0.0;
    bool timed_out = f0_ > 0.0 && !searching_pass(clock, pass_decrease);
    const double pass_yield = pass_decrease / static_cast<double>(std::max<std::uint64_t>(search_work_ + visit_work_, 1));
    adapt_labels_per_search();
    if (!timed_out) timed_out = !sweep_active_sets(clock, pass_yield);
    checks_.work += epoch_work_;
    epoch_work_ = 0;
    if (!refitting_) compact();
    return timed_out || (s_.time_limit > 0.0 && clock.seconds() > s_.time_limit);
  }

  /// Steps 2–6 of Algorithm 1 on every sample, in a fresh random order; adds the decrease of G
  /// the steps guarantee to `decrease`. Returns false when out of time.
  bool searching_pass(const Stopwatch& clock, double& decrease) {
    shuffle(std::span<std::size_t>(order_), rng_);
    std::size_t visited = 0;
    for (const std::size_t i : order_) {
      decrease += visit(i, true);
      if (time_is_up(visited, clock)) return false;
    }
    return true;
  }

  /// Counts a visit in `visited`; every samples_per_clock_read visits, whether the time limit
  /// (if any) has passed.
  [[nodiscard]] bool time_is_up(std::size_t& visited, const Stopwatch& clock) const {
    return s_.time_limit > 0.0 && ++visited % samples_per_clock_read == 0 && clock.seconds() > s_.time_limit;
  }

  /// Whether the exact gap is due at the end of `epoch` (run's comment): every gap_every
  /// epochs, or, with gap_every = 0, once the work since the last evaluation reaches
  /// work_per_check times that evaluation's.
  [[nodiscard]] bool gap_due(std::int64_t epoch) const {
    return s_.gap_every > 0 ? epoch - checks_.last >= s_.gap_every
                            : checks_.work >= work_per_check * checks_.check_work;
  }

  /// The exact primal parts, D(α) and the gap at the end of `epoch`, into info_ and the
  /// certificate; restarts the work count; counts the evaluation and its time.
  /// Returns false on a non-finite F or D.
  bool evaluate_gap(std::int64_t epoch) {
    PrimalParts p;
    double dual = 0.0;
    certificate_ = gap_spent_.timed([&] {
      p = primal();
      checks_.check_work = 0;
      for (ScoreBuffer& buffer : scores_) checks_.check_work += buffer.take_scanned();
      checks_.work = 0;
      checks_.last = epoch;
      dual = current_dual();
      // The refit minimises (1) without its λ term over the frozen support; (1) itself is reported.
      const double phase_primal = p.loss + (refitting_ ? 0.0 : s_.lambda * p.l1) + 0.5 * s_.mu * p.squared;
      checks_.gap = sparsemc::relative_gap(phase_primal, dual);
      // The certificate of (1): during the refit α is dual to the refit's problem, so (1)'s
      // bound is the best dual value of Algorithm 1's phase.
      if (!refitting_) best_dual_ = std::max(best_dual_, dual);
      return DualityGap{p.loss + s_.lambda * p.l1 + 0.5 * s_.mu * p.squared, refitting_ ? best_dual_ : dual};
    });
    info_.objective = certificate_.primal;
    info_.measure = checks_.gap;
    info_.nnz = p.nnz;
    info_.nnz_rows = p.nnz_rows;
    return std::isfinite(info_.objective) && std::isfinite(dual);
  }

  /// The report of `epoch`: objective, gap and support when the gap was evaluated at its end,
  /// NaN (−1 for the support) otherwise.
  [[nodiscard]] EpochReport report(std::int64_t epoch) const {
    const bool evaluated = checks_.last == epoch;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EpochReport r;
    r.epoch = epoch;
    r.objective = evaluated ? info_.objective : nan;
    r.measure = evaluated ? checks_.gap : nan;
    r.relative_gap = evaluated ? certificate_.relative() : nan;
    r.nnz_rows = evaluated ? info_.nnz_rows : -1;
    r.seconds = info_.seconds;
    return r;
  }

  /// What the end of `epoch` decides, nullopt to go on: converged once the gap reaches tol —
  /// or, with refit_l2, the §4.3 refit starts there —, else the status of a stop or of the
  /// last epoch, whose values are made exact first unless the caller returns a model kept by
  /// its callback instead of this iterate.
  std::optional<Status> verdict(std::int64_t epoch, const EpochEnd& end, bool keeps_best) {
    if (checks_.last == epoch && checks_.gap <= s_.tol) {
      if (!s_.refit_l2 || refitting_) return Status::converged;
      refitting_ = true;
      rows_.fix_support();
      if (!end.last && !end.stop) return std::nullopt;
    }
    if (!end.stop && !end.last) return std::nullopt;
    if (checks_.last != epoch && !(end.stop && keeps_best) && !evaluate_gap(epoch)) return Status::numerical_issue;
    return end.stop ? Status::stopped_by_callback : (end.out_of_time ? Status::time_limit : Status::max_iter);
  }

  /// Sample i's block of the dual: P_i, x_i, the bound C_i of 𝒞_i, Q_i = ‖x_i‖² and 𝒜_i
  /// (positives first, then negatives).
  struct Block {
    std::span<const ClassIndex> positives;
    SparseSlice<Scalar, Index> row;
    double bound;
    double curvature;
    std::vector<ActiveEntry>& active;
  };

  /// One iteration of Algorithm 1 on sample i: search (20) or (24)–(25), subproblem (21)–(22),
  /// maintenance (23), shrinking (step 5). Without `search` (an active-set sweep) steps 2–3
  /// are skipped: only the scores of 𝒜_i are computed, O(nnz(x_i)·|𝒜_i|), and a sample
  /// whose 𝒜_i holds no negative (so α^i = 0) costs O(1).
  /// Returns the decrease of G that step 4 guarantees (project's, or the exact one along the arc).
  double visit(std::size_t i, bool search) {
    if (bound_[i] == 0.0) return 0.0;  // c_i = 0, or no positive / no negative class: α^i = 0
    const Block b{y_[i], X_.outer(static_cast<Index>(i)), bound_[i], curvature_[i], active_[i]};
    const std::size_t n_pos = b.positives.size();
    if (!search && b.active.size() == n_pos) return 0.0;
    // With the exact search, (20)'s scores are those of every class: the gradient reuses them.
    const bool exact_scores = search && !s_.bi_stochastic;
    const bool arc = !search && searches_arc();  // a sweep gathers the entries of V anyway
    if (search) search_labels(b, exact_scores);
    block_gradient(b, exact_scores, arc);
    if (at_optimum_from_zero(b)) {
      b.active.resize(n_pos);
      return 0.0;
    }
    const double decrease = arc ? step_along_arc(b) : project(b, b.curvature);
    update_primal(b);
    // Step 5: drop the negatives whose α became 0 (positives stay).
    b.active.erase(std::remove_if(b.active.begin() + static_cast<std::ptrdiff_t>(n_pos), b.active.end(),
                                  [](const ActiveEntry& e) { return e.alpha == 0.0; }),
                   b.active.end());
    return decrease;
  }

  /// Steps 2–3: the most violating negative label(s) — over all K classes (20), or over one
  /// of the ν class partitions (24) from importance-sampled features (25) — join 𝒜_i.
  void search_labels(const Block& b, bool exact) {
    ScoreBuffer& scores = scores_.front();
    scores.begin(b.positives, rows_);
    if (exact) {
      scores.accumulate(b.row, rows_, ScoreBuffer::npos);
      scores.top_negatives(rows_, ScoreBuffer::npos, labels_per_search_, rng_, found_);
    } else {
      const auto part = static_cast<std::size_t>(uniform_index(rng_, rows_.n_parts()));
      accumulate_sampled(b.row, part);
      scores.top_negatives(rows_, part, labels_per_search_, rng_, found_);
    }
    search_work_ += scores.take_scanned();
    for (const ClassIndex k : found_)
      if (std::none_of(b.active.begin(), b.active.end(), [&](const ActiveEntry& e) { return e.cls == k; }))
        b.active.push_back({k, 0.0});
  }

  /// (25): ⌈d_i/speedup⌉ features of x_i, drawn with probability ∝ |x_ij|, into the scores
  /// of class partition `part`.
  void accumulate_sampled(SparseSlice<Scalar, Index> row, std::size_t part) {
    if (row.empty()) return;
    cumulative_.resize(row.size());
    double sum = 0.0;
    for (std::size_t p = 0; p < row.size(); ++p) cumulative_[p] = sum += std::abs(static_cast<double>(row.values[p]));
    const auto draws = static_cast<std::size_t>(std::ceil(static_cast<double>(row.size()) / s_.speedup));
    if (sum > 0.0) scores_.front().accumulate_sampled(row, cumulative_, draws, rows_, part, rng_);
  }

  /// The block gradient (17) on 𝒜_i into score_: ∇_k = z_k + [k ∉ P_i], z_k = ⟨w_k, x_i⟩
  /// exactly (score_ holds z; the [k ∉ P_i] enters the projection). `exact_scores`: the
  /// search's scores are exact and are read back; otherwise x_i meets the rows of W. `arc`
  /// (a sweep's visit, so never with `exact_scores`): the entries v_jk of x_i × 𝒜_i are
  /// gathered into values_ too (step_along_arc reads them).
  void block_gradient(const Block& b, bool exact_scores, bool arc) {
    const auto& A = b.active;
    const auto& row = b.row;
    const std::size_t m = A.size(), nnz = row.size();
    if (exact_scores) {
      score_.resize(m);
      for (std::size_t r = 0; r < m; ++r) score_[r] = scores_.front().score(A[r].cls);
      return;
    }
    if (arc) values_.resize(m * nnz);
    score_.assign(m, 0.0);
    for (std::size_t p = 0; p < nnz; ++p) {
      if (p + prefetch_table_distance < nnz)
        rows_.prefetch_table(static_cast<std::size_t>(row.indices[p + prefetch_table_distance]));
      if (p + prefetch_entry_distance < nnz)
        for (std::size_t r = 0; r < m; ++r) rows_.prefetch(static_cast<std::size_t>(row.indices[p + prefetch_entry_distance]), A[r].cls);
      const auto j = static_cast<std::size_t>(row.indices[p]);
      const auto x = static_cast<double>(row.values[p]);
      if (arc) {
        for (std::size_t r = 0; r < m; ++r) score_[r] += x * rows_.soft_threshold(values_[r * nnz + p] = rows_.value(j, A[r].cls));
      } else {
        for (std::size_t r = 0; r < m; ++r) score_[r] += x * rows_.weight(j, A[r].cls);
      }
    }
    visit_work_ += nnz * m;
  }

  /// Whether α^i = 0 and no active pair violates the margin, 1 + max_{k ∉ P_i} z_k −
  /// min_{k ∈ P_i} z_k ≤ 0: then α^i = 0 solves (21) and there is nothing to do.
  [[nodiscard]] bool at_optimum_from_zero(const Block& b) const {
    if (std::any_of(b.active.begin(), b.active.end(), [](const ActiveEntry& e) { return e.alpha != 0.0; }))
      return false;
    const std::size_t n_pos = b.positives.size();
    double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
    for (std::size_t r = 0; r < n_pos; ++r) lowest = std::min(lowest, score_[r]);
    for (std::size_t r = n_pos; r < b.active.size(); ++r) highest = std::max(highest, score_[r]);
    return 1.0 + highest - lowest <= 0.0;
  }

  /// Step 4: subproblem (21) with curvature Q (Algorithm 1's Q_i = ‖x_i‖²), i.e. the
  /// projection (22) onto 𝒞_i of the unconstrained minimiser a = α^i − ∇/Q. Leaves the old α^i
  /// in old_. Returns the decrease of the model, −(∇ᵀΔα + ½Q‖Δα‖²) ≥ 0: with Q = Q_i, (21)
  /// bounds G from above, so G falls by at least that much.
  double project(const Block& b, double Q) {
    auto& A = b.active;
    const std::size_t m = A.size(), n_pos = b.positives.size();
    const double bound = b.bound;
    old_.resize(m);
    for (std::size_t r = 0; r < m; ++r) old_[r] = A[r].alpha;
    target_.resize(m);
    if (n_pos == 1) {
      // 𝒞_i is the shifted simplex α = C e_y − u, u ≥ 0, Σu = C: project C e_y − a.
      target_[0] = bound - (old_[0] - score_[0] / Q);
      for (std::size_t r = 1; r < m; ++r) target_[r] = (score_[r] + 1.0) / Q - old_[r];
      prox::project_simplex(std::span<double>(target_), bound, scratch_);
      A[0].alpha = bound - target_[0];
      for (std::size_t r = 1; r < m; ++r) A[r].alpha = -target_[r];
    } else {
      // Algorithm 2 on (b, c) of (22): x = −α_N, y = α_P, Σx = Σy = t ∈ [0, C].
      for (std::size_t r = 0; r < n_pos; ++r) target_[r] = old_[r] - score_[r] / Q;
      for (std::size_t r = n_pos; r < m; ++r) target_[r] = (score_[r] + 1.0) / Q - old_[r];
      const std::span<double> all(target_);
      prox::project_bi_simplex(all.subspan(n_pos), all.first(n_pos), bound, scratch_);
      for (std::size_t r = 0; r < n_pos; ++r) A[r].alpha = target_[r];
      for (std::size_t r = n_pos; r < m; ++r) A[r].alpha = -target_[r];
    }
    double model_change = 0.0;  // ∇ᵀΔα + ½Q‖Δα‖², ∇_r = z_r (+1 on the negatives)
    for (std::size_t r = 0; r < m; ++r) {
      const double step = A[r].alpha - old_[r];
      model_change += (score_[r] + (r < n_pos ? 0.0 : 1.0) + 0.5 * Q * step) * step;
    }
    return -model_change;
  }

  /// Whether step 4 of a sweep searches the projection arc: λ > 0 (with λ = 0, G is quadratic
  /// on a block with curvature exactly Q_i, and (21) is its minimiser), not in the §4.3 refit,
  /// and while the last certificate is above arc_until_gap. (A searching pass keeps (21)'s
  /// step: its scores come from the search, and gathering the entries of V would cost a random
  /// read each; on sector, λ' = 0.01, 1.37× the time against 1.03× in the sweeps only.)
  /// Below arc_until_gap Algorithm 1's steps take over: the arc's long steps drive G to its
  /// rounding floor, where W(α) — accurate only to the square root of G's error, ½‖W − W*‖² ≤
  /// G − G* — moves by up to ~1e-7 with no visible change of G (on dna, λ' = 0.1, the gap
  /// stalled near 1e-7 where (21)'s steps certify 1e-9).
  [[nodiscard]] bool searches_arc() const noexcept {
    return s_.arc_search && tau_ > 0.0 && !refitting_ && !(checks_.gap <= arc_until_gap);
  }

  /// Step 4 along the projection arc α(Q) = Π_𝒞ᵢ(α^i − ∇/Q) (Bertsekas' projection arc; the
  /// (21)–(22) solution for curvature Q). G restricted to block i is ½Σ_{j∈x_i, k∈𝒜_i}
  /// S_τ(v_jk + x_ij Δα_k)² + Σ_{k∉P_i} Δα_k + const, piecewise quadratic: only the entries
  /// above the threshold τ curve it, so Q_i = ‖x_i‖², which counts all of them, makes (21) a
  /// loose bound and its steps short while W is sparse. The step tries Q_i, Q_i/4, Q_i/16, …
  /// (at most arc_trials), stops at the first that does not lower G, and keeps the best; G is
  /// evaluated exactly from the gathered v_jk (values_): O(nnz(x_i)·|𝒜_i|) vectorised flops a
  /// trial, no access to V. The first trial is (21)'s own step, so a visit lowers G at least
  /// as much as Algorithm 1's. Leaves the old α^i in old_; returns the decrease of G.
  double step_along_arc(const Block& b) {
    auto& A = b.active;
    const std::size_t m = A.size(), nnz = b.row.size();
    x_.resize(nnz);
    clamp_change_.resize(nnz);
    for (std::size_t p = 0; p < nnz; ++p) x_[p] = static_cast<double>(b.row.values[p]);
    best_alpha_.resize(m);
    double best = std::numeric_limits<double>::infinity(), Q = b.curvature;
    for (int trial = 0; trial < arc_trials; ++trial, Q *= arc_shrink) {
      if (trial > 0)
        for (std::size_t r = 0; r < m; ++r) A[r].alpha = old_[r];
      project(b, Q);
      const double change = block_change(b);
      if (!(change < best)) break;
      best = change;
      for (std::size_t r = 0; r < m; ++r) best_alpha_[r] = A[r].alpha;
    }
    for (std::size_t r = 0; r < m; ++r) A[r].alpha = best_alpha_[r];
    return -best;
  }

  /// The gathered v_jk, j ∈ x_i, of the r-th class of 𝒜_i.
  [[nodiscard]] Eigen::Map<const Eigen::ArrayXd> entries_of(std::size_t r, std::size_t nnz) const {
    return {values_.data() + r * nnz, static_cast<Eigen::Index>(nnz)};
  }

  /// G at the new α^i minus G at old_, exactly, from the gathered values_ and the block
  /// gradient: with δ_jk = S_τ(v_jk + x_ijΔα_k) − S_τ(v_jk) = x_ijΔα_k − c_jk, c_jk =
  /// clamp(v_jk + x_ijΔα_k) − clamp(v_jk) (S_τ(u) = u − clamp(u, −τ, τ)),
  ///     ½Σ_j [S_τ(v_jk + x_ijΔα_k)² − S_τ(v_jk)²] = Δα_k z_k + Σ_j (½δ_jk² − c_jk S_τ(v_jk)),
  /// so the change is ∇ᵀΔα plus nonnegative curvature terms, each small where the step is: no
  /// cancellation of ½S_τ² sums, which near the optimum would hide the difference between two
  /// trials (and let one that raises G by a rounding error move W).
  double block_change(const Block& b) {
    const auto& A = b.active;
    const std::size_t m = A.size(), n_pos = b.positives.size(), nnz = b.row.size();
    const Eigen::Map<const Eigen::ArrayXd> x(x_.data(), static_cast<Eigen::Index>(nnz));
    Eigen::Map<Eigen::ArrayXd> clamp_change(clamp_change_.data(), static_cast<Eigen::Index>(nnz));
    const auto clamp = [&](const auto& u) { return u.cwiseMax(-tau_).cwiseMin(tau_); };
    double change = 0.0;
    for (std::size_t r = 0; r < m; ++r) {
      const double step = A[r].alpha - old_[r];
      if (step == 0.0) continue;
      const auto v = entries_of(r, nnz);
      clamp_change = clamp(v + step * x) - clamp(v);
      change += step * (score_[r] + (r < n_pos ? 0.0 : 1.0)) +
                (0.5 * (step * x - clamp_change).square() - clamp_change * (v - clamp(v))).sum();
    }
    return change;
  }

  /// Step 6: V += x_i Δα^iᵀ and W = prox(V) on the changed entries only (23); turns old_
  /// into Δα^i.
  void update_primal(const Block& b) {
    const auto& A = b.active;
    const auto& row = b.row;
    const std::size_t m = A.size();
    for (std::size_t r = 0; r < m; ++r) old_[r] = A[r].alpha - old_[r];
    visit_work_ += row.size() * static_cast<std::size_t>(std::count_if(old_.begin(), old_.end(), [](double d) { return d != 0.0; }));
    for (std::size_t p = 0; p < row.size(); ++p) {
      if (p + prefetch_table_distance < row.size())
        rows_.prefetch_table(static_cast<std::size_t>(row.indices[p + prefetch_table_distance]));
      if (p + prefetch_entry_distance < row.size())
        for (std::size_t r = 0; r < m; ++r)
          if (old_[r] != 0.0) rows_.prefetch(static_cast<std::size_t>(row.indices[p + prefetch_entry_distance]), A[r].cls);
      const auto j = static_cast<std::size_t>(row.indices[p]);
      const double x = static_cast<double>(row.values[p]);
      for (std::size_t r = 0; r < m; ++r)
        if (old_[r] != 0.0) rows_.add(j, A[r].cls, x * old_[r]);
    }
  }

  /// The fully corrective part between two searching passes: passes over the samples (fresh
  /// random order each) that solve subproblem (21)–(22) on the current active sets without
  /// searching. A sweep reads |𝒜_i| entries of V per nonzero of x_i and skips the samples with
  /// no active negative, so it costs O(Σ_i nnz(x_i)·|𝒜_i|) — with dual sparsity far below a
  /// searching pass (O(nnz(X)·K) when W is dense). The sweeps go on while one buys at least
  /// sweep_yield_ratio times the searching pass's `pass_yield`: the decrease of G guaranteed
  /// by (21) per entry read or written (counted, so the schedule is reproducible); at most
  /// `active_sweeps` of them. Returns false when out of time.
  bool sweep_active_sets(const Stopwatch& clock, double pass_yield) {
    if (f0_ == 0.0) return true;
    for (int sweep = 0; sweep < max_sweeps(); ++sweep) {
      shuffle(std::span<std::size_t>(order_), rng_);
      double decrease = 0.0;
      std::size_t visited = 0;
      for (const std::size_t i : order_) {
        decrease += visit(i, false);
        if (time_is_up(visited, clock)) return false;
      }
      const double yield = decrease / static_cast<double>(std::max<std::uint64_t>(visit_work_, 1));
      epoch_work_ += visit_work_;
      visit_work_ = 0;
      if (!(yield >= sweep_yield_ratio * pass_yield)) break;
    }
    return true;
  }

  /// active_sweeps, or, automatic, automatic_sweeps when the search is exact or V is small
  /// enough to stay in cache, else 0. With the bi-stochastic search on a large V a searching
  /// pass is cheap and the sweeps' random reads of the hashed rows are not (at K = 8000 they
  /// took 1.6× the time for 10 % fewer epochs: the active sets, not their solves, lag there).
  [[nodiscard]] int max_sweeps() const noexcept {
    if (s_.active_sweeps >= 0) return s_.active_sweeps;
    return !s_.bi_stochastic || rows_.stored() <= cached_pairs ? automatic_sweeps : 0;
  }

  /// §4.4: after each epoch, double the number of labels a search returns if the searches read
  /// more than twice as many entries as the rest of the iterations touched (counted work, not
  /// time, so that the run is reproducible), up to K.
  void adapt_labels_per_search() {
    if (s_.adapt_labels && search_work_ > 2 * visit_work_)
      labels_per_search_ = std::min<std::size_t>(2 * labels_per_search_, static_cast<std::size_t>(y_.n_classes()));
    epoch_work_ += search_work_ + visit_work_;
    search_work_ = 0;
    visit_work_ = 0;
  }

  /// Rebuilds V = Xᵀα from the nonzero α when the tables hold more than twice the pairs the
  /// active sets need (Σ_i nnz(x_i)·#{k : α_ik ≠ 0}): entries left behind by shrunk labels are
  /// dropped, so memory stays O(nnz(X)·max_i |𝒜_i|) as §3.1 states, and the rounding drift of
  /// the incremental updates is reset. Costs one pass over the active pairs.
  void compact() {
    std::size_t needed = 0;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      std::size_t nonzero = 0;
      for (const auto& e : active_[i]) nonzero += e.alpha != 0.0;
      needed += nonzero * X_.outer(static_cast<Index>(i)).size();
    }
    if (rows_.stored() <= 2 * needed + 4096) return;
    rows_.clear_values();
    for (std::size_t i = 0; i < active_.size(); ++i) {
      const auto row = X_.outer(static_cast<Index>(i));
      for (auto [j, x] : row)
        for (const auto& e : active_[i])
          if (e.alpha != 0.0) rows_.add(static_cast<std::size_t>(j), e.cls, static_cast<double>(x) * e.alpha);
    }
    epoch_work_ += needed;
  }

  /// The exact primal parts at the current W: every sample's scores from the sparse rows, the
  /// samples in fixed chunks on the team (each thread with its own score buffer), so the sum
  /// has the same bits at every thread count.
  PrimalParts primal() {
    PrimalParts p;
    const auto n = static_cast<std::size_t>(X_.rows());
    // The last pass's entries read (nnz(X) before the first) size the team.
    const double work = std::max(static_cast<double>(checks_.check_work), static_cast<double>(X_.nnz()));
    const int team = detail::team_for_work(s_.team, work);
    const double loss = detail::sample_sum(team, n, [&](std::size_t i) {
      if (bound_[i] == 0.0) return 0.0;
      ScoreBuffer& scores = scores_[static_cast<std::size_t>(detail::thread_index())];
      const auto positives = y_[i];
      scores.begin(positives, rows_);
      scores.accumulate(X_.outer(static_cast<Index>(i)), rows_, ScoreBuffer::npos);
      double lowest = std::numeric_limits<double>::infinity();
      for (ClassIndex k : positives) lowest = std::min(lowest, scores.score(k));
      const double violation = 1.0 + scores.max_negative() - lowest;
      return violation > 0.0 ? bound_[i] * violation : 0.0;
    });
    p.loss = loss * s_.mu;  // Σ C_i ℓ_i · μ = (1/n) Σ c_i ℓ_i
    std::int64_t last = -1;
    rows_.for_each_list([&](std::size_t j, std::span<const WeightEntry<Scalar>> list) {
      for (const auto& e : list) {
        const auto w = static_cast<double>(e.w);
        if (w == 0.0) continue;
        p.l1 += std::abs(w);
        p.squared += w * w;
        ++p.nnz;
        if (static_cast<std::int64_t>(j) != last) {
          last = static_cast<std::int64_t>(j);
          ++p.nnz_rows;
        }
      }
    });
    return p;
  }

  /// D(α) = −μG(α) of (1) at the current α (valid outside the refit, whose W is not S_τ(V)).
  [[nodiscard]] double current_dual() const noexcept {
    return -s_.mu * (rows_.half_squared_norm_of_prox() + dual_linear_term());
  }

  /// Σ_i e_iᵀα^i = Σ_i Σ_{k ∈ 𝒜_i ∖ P_i} α_ik.
  [[nodiscard]] double dual_linear_term() const noexcept {
    double sum = 0.0;
    for (std::size_t i = 0; i < active_.size(); ++i)
      for (std::size_t r = y_[i].size(); r < active_[i].size(); ++r) sum += active_[i][r].alpha;
    return sum;
  }

  /// The automatic active_sweeps sweeps with the bi-stochastic search while V holds at most
  /// this many pairs (16 bytes each: 1 MiB, a typical L2 cache).
  static constexpr std::size_t cached_pairs = std::size_t{1} << 16;
  /// The automatic active_sweeps: at most this many sweeps between two searching passes (the
  /// yield rule of sweep_active_sets ends them earlier). A tuning choice of this
  /// implementation, not the paper's.
  static constexpr int automatic_sweeps = 20;
  /// A sweep must guarantee this many times the searching pass's decrease of G per counted
  /// entry: its entries are gathered from V where a search streams rows (on sector, λ' = 0.01,
  /// a ratio of 1 swept past the point of return: 9.4 s against 7.1 s at 2; bibtex alike).
  /// A tuning choice of this implementation, not the paper's.
  static constexpr double sweep_yield_ratio = 2.0;
  /// The step along the projection arc tries at most arc_trials curvatures, each arc_shrink
  /// times the previous one (Q_i/4^6 ≈ Q_i/4096 last). Tuning choices of this implementation,
  /// not the paper's.
  static constexpr int arc_trials = 7;
  static constexpr double arc_shrink = 0.25;
  static constexpr double arc_until_gap = 1e-6;
  /// The time limit is read from the clock once per this many visits (FCBCFWOptions::time_limit).
  static constexpr std::size_t samples_per_clock_read = 256;
  /// The gap is evaluated once the work since the last evaluation reaches this many times that
  /// evaluation's work (gap_every = 0): the checks then take at most about a third of the
  /// solve (run's comment). A design choice of this implementation, not the paper's.
  static constexpr std::uint64_t work_per_check = 2;
  /// How far ahead of the nonzero being processed a visit prefetches: the table of feature j
  /// (prefetch_table_distance nonzeros ahead), then its entries for the active classes
  /// (prefetch_entry_distance ahead, once the table is likely in cache). The tables are
  /// scattered in memory; the distances are a tuning choice of this implementation, not the
  /// paper's.
  static constexpr std::size_t prefetch_table_distance = 16;
  static constexpr std::size_t prefetch_entry_distance = 8;

  Rows X_;
  LabelView y_;
  Settings s_;
  Rng rng_;
  double tau_ = 0.0;  ///< λ/μ, the soft threshold of (15)
  double f0_ = 0.0;   ///< F(0) of (1); 0 when no sample has a pair (nothing to fit)
  double best_dual_ = -std::numeric_limits<double>::infinity();  ///< max D(α) over Algorithm 1's evaluations
  DualityGap certificate_;  ///< (F, D) of (1) at the last evaluation
  bool refitting_ = false;  ///< in the §4.3 refit (α is dual to another problem)
  SolverInfo info_;         ///< the solve's information block, as of the last epoch's end
  GapChecks checks_;        ///< the gap evaluations of run()
  GapCost gap_spent_;       ///< their number and time
  FeatureRows<Scalar> rows_;
  /// One score buffer per thread of the team: the certificate's pass, and the searches (the
  /// first; each search takes its own count of entries read before the next pass).
  std::vector<ScoreBuffer> scores_;
  std::vector<double> bound_;       ///< C_i = c_i/(μn), 0 for a sample without a pair
  std::vector<double> curvature_;   ///< Q_i = ‖x_i‖²
  std::vector<std::vector<ActiveEntry>> active_;  ///< 𝒜_i: positives first, then negatives
  std::uint64_t visit_work_ = 0;    ///< entries of V read or written since the last epoch end
  std::uint64_t search_work_ = 0;   ///< weight entries read by the searches since then
  std::uint64_t epoch_work_ = 0;    ///< search + visit work of the epoch so far
  std::size_t labels_per_search_ = 1;
  std::vector<ClassIndex> found_;
  std::vector<std::size_t> order_;  ///< the sample order of the current pass
  // Work space (grows, never shrinks).
  std::vector<double> score_, old_, target_, scratch_, cumulative_;
  std::vector<double> values_;  ///< the step along the arc: v_jk of x_i × 𝒜_i, class-major
  std::vector<double> best_alpha_;
  std::vector<double> x_, clamp_change_;  ///< x_i in double; one class's c_jk in a trial (block_change)
};

}  // namespace sparsemc::detail::fcbcfw
