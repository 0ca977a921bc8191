#pragma once
/// \file fcbcfw.hpp
/// PD-Sparse: the fully-corrective block-coordinate Frank–Wolfe method of Yen, Huang, Zhong,
/// Ravikumar & Dhillon (ICML 2016) for elastic-net Crammer–Singer / separation-ranking problems
/// with very many classes, solved through the dual and exploiting primal and dual sparsity.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/status.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/dense_problem.hpp"
#include "../../data/problem.hpp"
#include "../../data/sample_entries.hpp"
#include "../../loss/crammer_singer.hpp"
#include "../../penalty/l1.hpp"
#include "../../penalty/none.hpp"
#include "../../model/linear_model.hpp"
#include "../solver_base.hpp"
#include "detail/engine.hpp"

namespace sparsemc {

/// How FCBCFW picks the label it adds to a sample's active set.
enum class FCBCFWSearch {
  exact,          ///< the most violating negative label over all K classes, eq. (20)
  bi_stochastic,  ///< a random class partition (24) and importance-sampled features (25), §3.2
  automatic,      ///< bi_stochastic when K ≥ 1000, exact otherwise
};

/// How FCBCFW stores V = Xᵀα and W (detail/feature_rows.hpp).
enum class FCBCFWStorage {
  hashed,     ///< sparse per-feature rows (§4.1–4.2): memory O(nnz(X)·|𝒜_i|), never D·K
  dense,      ///< V as a D×K array, W = prox(V) applied on the fly: streamed, vectorised searches; exact search only
  automatic,  ///< dense when the search is exact and D·K ≤ 2^24 (V then takes at most 128 MiB), else hashed
};

/// A callback that keeps a model of its own choosing (the held-out early stop): when it stops
/// the solve, `fit` returns that model instead of the last iterate.
template <class Callback, class Scalar>
concept KeepsBestModel = requires(const Callback& cb) {
  { cb.best_model() } -> std::convertible_to<const LinearModel<Scalar>*>;
  cb.best_report();
};

namespace detail::fcbcfw {
/// Whether any of the callbacks keeps its own best model.
template <class Scalar, class... Callbacks>
inline constexpr bool any_keeps_best = (KeepsBestModel<Callbacks, Scalar> || ... || false);
}  // namespace detail::fcbcfw

/// What `FCBCFW::solve` returns: W and α in sparse form (nothing of size d×K or n×K), and the
/// information block. `fit` turns it into a LinearModel.
template <RealScalar Scalar>
struct FCBCFWSolution {
  std::int64_t n_features = 0;
  ClassIndex n_classes = 0;
  /// W ∈ R^{d×K} by feature rows: row j holds classes weight_class[weight_ptr[j] .. weight_ptr[j+1])
  /// (increasing) with values weight[...]; only nonzero weights are stored.
  std::vector<std::int64_t> weight_ptr;
  std::vector<ClassIndex> weight_class;
  std::vector<Scalar> weight;
  /// The dual point α in PD-Sparse's scale (eq. 14–16), by samples: α^i ∈ 𝒞_i, i.e. α_ik ≥ 0 on
  /// the positive classes, ≤ 0 on the others, Σ_{k∈P_i} α_ik = −Σ_{k∉P_i} α_ik ∈ [0, c_i/(μn)];
  /// W = S_{λ/μ}(Σ_i x_i α^iᵀ). Only nonzero entries are stored.
  std::vector<std::int64_t> dual_ptr;
  std::vector<ClassIndex> dual_class;
  std::vector<double> dual;
  SolverInfo info;
  ModelProvenance provenance;

  /// W as a LinearModel (only its nonzero entries stored; labels are the class indices 0..K−1).
  [[nodiscard]] LinearModel<Scalar> model() const {
    LinearModel<Scalar> m = detail::fcbcfw::model_from_feature_rows<Scalar>(n_features, n_classes, weight_ptr,
                                                                           weight_class, weight);
    m.provenance() = provenance;
    return m;
  }
};

/// Options of `FCBCFW`. Every field has a default; `validate()` names a bad field.
struct FCBCFWOptions {
  /// Stop (converged) when the relative duality gap of (1), (F(W) − D(α))/max(|F(W)|, 10⁻¹²),
  /// is ≤ tol — F and D exact, in (1)'s scale (class comment, "Stopping").
  double tol = 1e-3;
  /// At most this many passes over the samples (the refit's epochs included).
  std::int64_t max_epochs = 1000;
  /// Wall-clock budget in seconds, checked every 256 samples; 0 = none.
  double time_limit = 0.0;
  /// Seeds the sample order, the hash permutation π, ties at score 0 and the sampling (24)–(25).
  std::uint64_t seed = 0;
  /// Greedy search (20), or the bi-stochastic approximation (24)–(25) of §3.2.
  FCBCFWSearch search = FCBCFWSearch::automatic;
  /// ν of (24): the number of random class partitions of the bi-stochastic search (paper: 3).
  int class_partitions = 3;
  /// d_i/d̃_i of (25), ≥ 1: features sampled per search; 0 = §4.4's rule
  /// ⌈min(5DK/(C·nnz(X)·log K), nnz(X)/(5n))⌉ with C = 1/(μn).
  double speedup = 0.0;
  /// §4.3: after convergence, re-solve without the ℓ1 term on the selected support.
  bool refit_l2 = false;
  /// Warm start: negatives per sample seeded into 𝒜_i from the initial model's scores.
  int warm_start_labels = 10;
  /// Evaluate the exact gap every this many epochs; 0 = whenever the work since the last
  /// evaluation reaches twice the work of one (every other epoch with the exact search; see
  /// the class comment).
  std::int64_t gap_every = 0;
  /// Labels the search (20)/(24) returns per iteration (the best ones), initially.
  int labels_per_search = 1;
  /// §4.4: after an epoch whose searches read over twice as many entries as the rest of the
  /// iterations, double labels_per_search (work is counted, so this stays reproducible).
  bool adapt_labels = true;
  /// Fully corrective sweeps after each searching pass: at most this many passes that re-solve
  /// (21)–(22) on the active sets only, without searching (each costs Σ_i nnz(x_i)·|𝒜_i|);
  /// they stop once a sweep guarantees less decrease of the dual per entry of V read or written
  /// than the searching pass did. 0 = Algorithm 1 alone; −1 = automatic: 20 with the exact
  /// search or while V holds at most 2^16 (class, feature) pairs, 0 with the bi-stochastic
  /// search on a larger V (there the search, not the solves on 𝒜_i, is what lags).
  int active_sweeps = -1;
  /// With λ > 0, the sweeps' step 4 also tries the curvatures Q_i/4, Q_i/16, … of the
  /// projection arc and keeps the point of lowest G (exact on the block; never worse than
  /// (21)'s step), until the certificate is within 1e-6. Same optimum; 0.7× the time on
  /// bibtex (multilabel, λ' = 1), 0.18× on a generated K = 1000 problem (docs/fcbcfw.md).
  bool arc_search = true;
  /// Layout of V and W: sparse rows (the paper's), dense d×K arrays, or by size (see
  /// FCBCFWStorage); dense needs the exact search.
  FCBCFWStorage storage = FCBCFWStorage::automatic;
  /// Threads of the certificate's pass over the samples (0 = every core, see core/parallel.hpp);
  /// the epochs are sequential, as Algorithm 1 is. The pass sums over fixed chunks of samples,
  /// so every thread count gives the same iterates and the same certificates, bit for bit.
  int threads = 0;

  /// Throws std::invalid_argument naming the first bad field.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    if (class_partitions < 1) detail::fail_option("class_partitions", ">= 1", class_partitions);
    if (!(speedup == 0.0 || speedup >= 1.0) || !std::isfinite(speedup))
      detail::fail_option("speedup", "0 (automatic) or >= 1", speedup);
    detail::require_nonnegative("warm_start_labels", warm_start_labels);
    detail::require_nonnegative("gap_every", gap_every);
    if (active_sweeps < -1) detail::fail_option("active_sweeps", ">= -1 (-1: automatic)", active_sweeps);
    if (labels_per_search < 1) detail::fail_option("labels_per_search", ">= 1", labels_per_search);
    detail::require_nonnegative("threads", threads);
    if (storage == FCBCFWStorage::dense && search == FCBCFWSearch::bi_stochastic)
      detail::fail_option("storage", "hashed or automatic with the bi-stochastic search", "dense");
  }
};

/// What FCBCFW solves: PD-Sparse's problem, a separation ranking loss (Crammer–Singer; eq. 2–3)
/// with the elastic net λ‖W‖₁ + (μ/2)‖W‖² (L1, or NoPenalty for λ = 0).
template <class Loss, class Penalty>
concept FCBCFWAccepts =
    SeparationRankingLoss<Loss> && (std::same_as<Penalty, L1> || std::same_as<Penalty, NoPenalty>);

/// Fully-corrective block-coordinate Frank–Wolfe (PD-Sparse, Yen et al. 2016, Algorithm 1) for
/// objective (1) with the Crammer–Singer loss (multiclass, eq. 3) or its multilabel form, the
/// separation ranking loss (eq. 2), and the elastic net:
///
///     F(W) = (1/n) Σ_i c_i ℓ(Wᵀx_i, Y_i) + λ‖W‖₁ + (μ/2)‖W‖²,   μ > 0,
///     ℓ(s, Y) = max_{n∉Y, p∈Y} (1 + s_n − s_p)_+   (0 when Y is empty or full).
///
/// F/μ is PD-Sparse's problem (13) with λ' = λ/μ, C_i = c_i/(μn); no intercept (use a bias
/// feature). It is solved through the dual (14): min G(α) = ½ Σ_k ‖w_k(α)‖² + Σ_i e_iᵀα^i over
/// α^i ∈ 𝒞_i (16), w(α) = S_{λ'}(Xᵀα) (15). Each iteration takes one sample i and
///   1. finds the most violating negative label k* = argmax_{k∉P_i} ⟨w_k, x_i⟩ (20), or with the
///      bi-stochastic search (§3.2) the best label of random class partitions (24);
///   2. adds it to the active set 𝒜_i (which always holds the positive labels P_i);
///   3. minimises the quadratic upper bound (21) of G over α^i restricted to 𝒜_i exactly: a
///      projection onto the simplex (multiclass) or Algorithm 2's bi-simplex (22); with λ > 0,
///      in the sweeps over the active sets (`arc_search`), also the same projection for Q_i/4,
///      Q_i/16, … — the projection arc — keeping the point of lowest G, evaluated exactly on
///      the block (only the entries above the threshold curve G, so (21)'s Q_i = ‖x_i‖² is
///      loose while W is sparse);
///   4. drops the negatives whose α became 0 and updates V = Xᵀα and W = S_{λ'}(V) (23).
///
/// `converged` means the relative duality gap of (1), (F(W) − D(α))/max(|F(W)|, 10⁻¹²) with
/// D(α) = −μG(α), is ≤ tol at an epoch's end (with `refit_l2`: the refitted problem's gap).
///
/// X is a CSR `Problem` or a `DenseProblem`, whose rows are read as CSR rows of their nonzeros
/// (one scan of the row per read, no copy of X).
///
/// Implementation notes: docs/fcbcfw.md.
///
/// \code
///   #include <sparsemc/loss/crammer_singer.hpp>
///   #include <sparsemc/penalty/l1.hpp>
///   #include <sparsemc/solver/fcbcfw/fcbcfw.hpp>
///   auto data = sparsemc::io::read_libsvm<double>("sector.scale");
///   const double n = data.n_samples(), C = 1.0;                  // PD-Sparse's -c 1 -l 0.1
///   sparsemc::FCBCFW<sparsemc::CrammerSinger, sparsemc::L1> solver(
///       {}, {.lambda = 0.1 / (C * n), .mu = 1 / (C * n)}, {.tol = 1e-3});
///   auto result = solver.fit(data.problem<Eigen::RowMajor>());
///   std::cout << result.info.objective << " " << result.model.nnz() << "\n";
/// \endcode
template <class Loss, class Penalty>
class FCBCFW : public detail::SolverParts<Loss, Penalty, FCBCFWOptions> {
  using Base = detail::SolverParts<Loss, Penalty, FCBCFWOptions>;

  static_assert(SeparationRankingLoss<Loss>,
                "FCBCFW solves the Crammer-Singer / separation ranking loss only (PD-Sparse eq. 2-3): "
                "use FCBCFW<CrammerSinger, L1>.");
  static_assert(std::same_as<Penalty, L1> || std::same_as<Penalty, NoPenalty>,
                "FCBCFW solves the elastic net lambda*|W|_1 + mu/2*|W|^2 only: the penalty must be L1 "
                "(or NoPenalty for lambda = 0), with mu > 0.");

 public:
  using Options = FCBCFWOptions;

  /// Validates the options and the penalty (μ > 0 finite, λ ≥ 0 finite).
  explicit FCBCFW(Loss loss = {}, Penalty penalty = {}, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {
    if (!(penalty_.mu > 0.0) || !std::isfinite(penalty_.mu))
      detail::fail_option("mu", "> 0 and finite for fcbcfw (the dual needs the ridge term)", penalty_.mu);
    if (!(lambda() >= 0.0) || !std::isfinite(lambda())) detail::fail_option("lambda", ">= 0 and finite", lambda());
  }

  /// λ of (1) (0 for NoPenalty).
  [[nodiscard]] double lambda() const noexcept {
    if constexpr (std::same_as<Penalty, NoPenalty>) return 0.0;
    else return static_cast<double>(penalty_.lambda);
  }

  /// Solves (1) on a CSR or a dense problem; returns W and α in sparse form (see FCBCFWSolution).
  template <TrainingProblem Prob, class... Callbacks>
  FCBCFWSolution<ProblemScalar<Prob>> solve(const Prob& problem, Callbacks&&... callbacks) const {
    auto [engine, info] = run(problem, nullptr, false, callbacks...);
    FCBCFWSolution<ProblemScalar<Prob>> out;
    out.n_features = static_cast<std::int64_t>(problem.n_features());
    out.n_classes = problem.n_classes();
    engine.export_weights(out.weight_ptr, out.weight_class, out.weight);
    engine.export_dual(out.dual_ptr, out.dual_class, out.dual);
    out.info = info;
    out.info.duality_gap = engine.certificate().gap();
    out.info.relative_gap = engine.certificate().relative();
    out.provenance = provenance(info.status);
    notify_end(info, callbacks...);
    return out;
  }

  /// Solves (1) and returns the model and the information block.
  template <TrainingProblem Prob, class... Callbacks>
    requires(!std::same_as<std::remove_cvref_t<Callbacks>, LinearModel<ProblemScalar<Prob>>> && ...)  // a warm start
  Result<ProblemScalar<Prob>> fit(const Prob& problem, Callbacks&&... callbacks) const {
    return fit_from(problem, nullptr, callbacks...);
  }

  /// Warm start from `initial` (seeds the active sets; see the class comment).
  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> fit(const Prob& problem, const LinearModel<ProblemScalar<Prob>>& initial,
                                  Callbacks&&... callbacks) const {
    return fit_from(problem, &initial, callbacks...);
  }

 private:
  template <TrainingProblem Prob>
  struct Run {
    detail::fcbcfw::Engine<Prob> engine;
    SolverInfo info;
  };

  [[nodiscard]] ModelProvenance provenance(Status status) const {
    ModelProvenance p;
    p.loss = std::string(Loss::name);
    p.penalty = std::string(Penalty::name);
    p.solver = "fcbcfw";
    p.lambda = lambda();
    p.mu = static_cast<double>(penalty_.mu);
    p.status = std::string(to_string(status));
    return p;
  }

  /// The options resolved for a problem (search mode, ν, the speed-up rate of §4.4).
  template <TrainingProblem Prob>
  [[nodiscard]] detail::fcbcfw::Settings settings(const Prob& problem, double nonzeros) const {
    detail::fcbcfw::Settings s;
    s.lambda = lambda();
    s.mu = static_cast<double>(penalty_.mu);
    s.tol = options_.tol;
    s.max_epochs = options_.max_epochs;
    s.time_limit = options_.time_limit;
    s.seed = options_.seed;
    const double K = problem.n_classes();
    s.bi_stochastic = options_.search == FCBCFWSearch::bi_stochastic ||
                      (options_.search == FCBCFWSearch::automatic && K >= 1000);
    s.n_parts = static_cast<int>(std::min<double>(options_.class_partitions, K));
    s.speedup = options_.speedup;
    if (s.speedup == 0.0) {
      const double n = problem.n_samples(), D = problem.n_features();
      const double nnz = std::max(nonzeros, 1.0);
      const double C = 1.0 / (s.mu * n);
      const double rate = std::min(5.0 * D * K / (C * nnz * std::log(std::max(K, 2.0))), nnz / (5.0 * n));
      s.speedup = std::max(1.0, std::ceil(rate));
    }
    s.refit_l2 = options_.refit_l2;
    s.warm_start_labels = options_.warm_start_labels;
    s.gap_every = options_.gap_every;
    s.labels_per_search = options_.labels_per_search;
    s.adapt_labels = options_.adapt_labels;
    s.active_sweeps = options_.active_sweeps;
    s.arc_search = options_.arc_search;
    s.team = resolve_threads(options_.threads);
    if (options_.storage == FCBCFWStorage::dense && s.bi_stochastic)
      detail::fail_option("storage", "hashed or automatic when the search resolves to bi-stochastic (K >= 1000)", "dense");
    const double pairs = static_cast<double>(problem.n_features()) * K;
    s.dense_rows = options_.storage == FCBCFWStorage::dense ||
                   (options_.storage == FCBCFWStorage::automatic && !s.bi_stochastic && pairs <= dense_pairs);
    return s;
  }

  /// The solve. With `may_return_kept` (fit), a stop by a callback that keeps its own best model
  /// leaves the last iterate unevaluated: fit returns the kept model instead.
  template <TrainingProblem Prob, class... Callbacks>
  Run<Prob> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial, bool may_return_kept,
                Callbacks&... callbacks) const {
    static_assert(SampleRowProblem<Prob>,
                  "FCBCFW walks samples: pass a CsrProblem (Dataset::problem<Eigen::RowMajor>()) or a DenseProblem.");
    using Scalar = ProblemScalar<Prob>;
    problem.validate();
    if (initial != nullptr)
      detail::check_warm_start("FCBCFW", *initial, static_cast<std::int64_t>(problem.n_features()),
                               static_cast<std::int64_t>(problem.n_classes()));
    auto rows = detail::fcbcfw::sample_rows(problem, resolve_threads(options_.threads));
    const detail::fcbcfw::Settings resolved = settings(problem, static_cast<double>(rows.nnz()));
    Run<Prob> r{detail::fcbcfw::Engine<Prob>(problem, std::move(rows), resolved), {}};
    if (initial != nullptr) r.engine.seed_active_sets(*initial);
    notify_begin(callbacks...);
    r.info = r.engine.run([&](const EpochReport& report) {
      return notify_end_epoch(
          report,
          [&] {
            auto m = r.engine.model();
            m.provenance() = provenance(Status::max_iter);
            m.provenance().status.clear();  // unknown until the solve ends
            return m;
          },
          callbacks...);
    }, may_return_kept && detail::fcbcfw::any_keeps_best<Scalar, Callbacks...>);
    return r;
  }

  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> fit_from(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                       Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    auto [engine, info] = run(problem, initial, true, callbacks...);
    // The held-out early stop returns its best model (PD-Sparse's -h/-e behaviour).
    const LinearModel<Scalar>* best = nullptr;
    const EpochReport* best_report = nullptr;
    if (info.status == Status::stopped_by_callback) {
      auto find_best = [&](auto& cb) {
        if constexpr (KeepsBestModel<std::remove_cvref_t<decltype(cb)>, Scalar>)
          if (best == nullptr && cb.best_model() != nullptr) {
            best = cb.best_model();
            best_report = &cb.best_report();
          }
      };
      (find_best(callbacks), ...);
      static_cast<void>(find_best);  // no callbacks: nothing to look at
    }
    LinearModel<Scalar> model = best != nullptr ? *best : engine.model();
    DualityGap certificate = engine.certificate();
    if (best != nullptr) {
      // An epoch without a gap evaluation: its objective now. The gap: against the best D(α).
      certificate.primal = std::isnan(best_report->objective) ? engine.objective_of(*best) : best_report->objective;
      certificate.dual = engine.dual_bound();
      info.measure = best_report->measure;
    } else if (info.status == Status::stopped_by_callback && detail::fcbcfw::any_keeps_best<Scalar, Callbacks...>) {
      // The keeping callback kept nothing: the last iterate, which run() left unevaluated.
      certificate.primal = engine.objective_of(model);
      certificate.dual = engine.dual_bound();
      info.measure = std::numeric_limits<double>::quiet_NaN();
    }
    Result<Scalar> result =
        detail::finish_result<Loss, Penalty, Scalar>(std::move(model), "fcbcfw", penalty_, -1.0, certificate, info);
    result.model.provenance().lambda = lambda();
    notify_end(result.info, callbacks...);
    return result;
  }

  /// The automatic storage is dense up to this many (feature, class) pairs (8 bytes each: V in double).
  static constexpr double dense_pairs = 16777216.0;  // 2^24

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
