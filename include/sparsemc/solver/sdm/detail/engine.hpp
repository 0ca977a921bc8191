#pragma once
/// \file engine.hpp
/// The state and the loop of one SequentialDual solve (Keerthi et al. 2008, the sequential dual
/// method); sequential_dual.hpp holds the public class and the mapping to objective (1). The
/// engine depends on neither the loss nor the penalty type: the loss is Crammer–Singer's and the
/// penalty the elastic net λ‖W‖₁ + (μ/2)‖W‖² given by its two numbers (λ = 0: the ridge term
/// alone), so every penalty SequentialDual accepts shares its code.

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/huge_pages.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/sample_entries.hpp"
#include "../../../loss/crammer_singer.hpp"
#include "../../../model/linear_model.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../options.hpp"

namespace sparsemc::detail {

/// The state and the loop of one solve on `Prob` (a CSR or a dense problem, walked by `sample_entries`): W,
/// α, the per-sample class lists (of `Slot`, an integer type that holds K) and the epoch's steps.
/// With λ > 0 it also holds V = Σ_i x_i α_iᵀ, and W = S_τ(V), τ = λ/μ (PD-Sparse's (15)).
template <class Prob, std::integral Slot>
class SdmEngine {
  using Options = SequentialDualOptions;
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  using Row = decltype(sample_entries(std::declval<const Prob&>(), Index{}));

 public:
  /// λ ≥ 0 and μ > 0 of the elastic net.
  SdmEngine(const Prob& problem, double lambda, double mu, const Options& options, std::vector<Label> labels)
      : problem_(problem), options_(options), lambda_(lambda), mu_(mu), threshold_(static_cast<Scalar>(lambda / mu)),
        labels_(std::move(labels)), n_(static_cast<std::size_t>(problem.n_samples())),
        K_(static_cast<std::size_t>(problem.n_classes())),
        W_(advised_zeros<ClassMatrix<Scalar>>(problem.n_features(), static_cast<Eigen::Index>(K_))),
        V_(lambda > 0 ? advised_zeros<ClassMatrix<Scalar>>(problem.n_features(), static_cast<Eigen::Index>(K_))
                      : ClassMatrix<Scalar>()),
        alpha_(advised_zeros<ClassMatrix<Scalar>>(static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(K_))),
        active_classes_(n_, static_cast<Slot>(K_)), label_(n_), cost_(n_),
        norm_sq_(n_), nonzeros_(n_), G_(K_), B_(K_), sorted_(K_), moved_class_(K_), moved_by_(K_),
        team_(resolve_threads(options.threads)),
        scores_(static_cast<std::size_t>(team_), ClassVector<Scalar>(static_cast<Eigen::Index>(K_))) {
    const double inv_n_mu = 1.0 / (static_cast<double>(n_) * mu_);
    assign_advised(classes_, n_ * K_, Slot{0});
    for (std::size_t i = 0; i < n_; ++i) {
      std::iota(classes_.begin() + static_cast<std::ptrdiff_t>(i * K_),
                classes_.begin() + static_cast<std::ptrdiff_t>((i + 1) * K_), Slot{0});
      label_[i] = problem.y[i][0];
      cost_[i] = static_cast<Scalar>(static_cast<double>(problem.weight(static_cast<Index>(i))) * inv_n_mu);
      Scalar sq = 0;
      std::size_t nonzeros = 0;
      for (auto [j, x] : sample_entries(problem, static_cast<Index>(i))) sq += x * x, ++nonzeros;
      norm_sq_[i] = sq;
      nonzeros_[i] = nonzeros;
      nnz_ += static_cast<double>(nonzeros);
      if (sq > Scalar(0) && cost_[i] > Scalar(0)) {
        samples_.push_back(static_cast<Index>(i));
      } else if (cost_[i] > Scalar(0) && K_ > 1) {
        // An empty row has ℓ = 1 whatever W is; its dual optimum α_i = C_i (e_y − e_k), any
        // k ≠ y, leaves W unchanged and makes D count that loss. No cost: α_i = 0.
        const auto other = static_cast<Eigen::Index>(label_[i] == 0 ? 1 : 0);
        alpha_(static_cast<Eigen::Index>(i), label_[i]) = cost_[i];
        alpha_(static_cast<Eigen::Index>(i), other) = -cost_[i];
      }
    }
    n_active_ = samples_.size();
  }

  /// Starts from the dual point of a model W₀ instead of α = 0, given its scores S = XW₀ (n × K):
  /// α_i = −C_i g_i, g_i = e_n − e_{y_i} the loss's subgradient at s_i (0 where ℓ = 0; the
  /// candidate of duality_gap.hpp), scaled by the t ∈ [0, 1] that maximises D(tα)
  /// (`best_start_scale`), then W = W(tα). Every g_i ≠ 0 takes the whole bound C_i, where the
  /// optimal α_i is often a small fraction of it: on dna at μ = 1/n the best t was 0.0024,
  /// and the epochs from t = 1 stalled at a relative gap of 3.9 where t gives 1.2e-3.
  void start_from(ClassMatrixRef<Scalar> S) {
    for (const Index i : samples_) {
      const auto row = static_cast<Eigen::Index>(i);
      CrammerSinger{}.subgradient(std::span<const Scalar>(S.row(row).data(), K_), problem_.y[static_cast<std::size_t>(i)],
                                  std::span<Scalar>(B_));
      const Scalar C = cost_[static_cast<std::size_t>(i)];
      for (std::size_t m = 0; m < K_; ++m) alpha_(row, static_cast<Eigen::Index>(m)) = -C * B_[m];
    }
    resum_weights();
    scale_start(best_start_scale());
  }

  /// argmax_{t ∈ [0, 1]} D(tα) over the visited samples' α (the others' stay): with
  /// a = Σ_i α_{i,y_i} and V = Σ_i x_i α_iᵀ, D(tα)/μ = ta − ½‖S_τ(tV)‖² + const, concave, with
  /// slope φ'(t) = a − ⟨V, S_τ(tV)⟩ decreasing and concave in t (piecewise linear, kinks at
  /// t = τ/|v|). Newton's steps from t = 1 stay right of the root and reach it in finitely many
  /// steps (one at λ = 0, where t = a/‖V‖²); each is a pass over V, O(dK).
  [[nodiscard]] double best_start_scale() const {
    double a = 0.0;
    for (const Index i : samples_)
      a += static_cast<double>(alpha_(static_cast<Eigen::Index>(i), label_[static_cast<std::size_t>(i)]));
    if (!(a > 0.0)) return 0.0;
    const ClassMatrix<Scalar>& V = sums();
    const double tau = static_cast<double>(threshold_);
    double t = 1.0;
    for (int step = 0; step < max_scale_steps; ++step) {
      double slope = a, curvature = 0.0;  // φ'(t), −φ''(t)
      for (const Scalar entry : V.reshaped()) {
        const double v = static_cast<double>(entry), tv = t * v;
        if (std::abs(tv) <= tau) continue;
        slope -= v * (tv - std::copysign(tau, v));
        curvature += v * v;
      }
      if (slope >= 0.0) break;  // D still rises at t
      const double next = t + slope / curvature;
      if (!(next < t * (1 - 1e-12))) break;
      t = std::max(next, 0.0);
    }
    return t;
  }

  /// α_i ← tα_i on the visited samples, V ← tV (W at λ = 0) and W = S_τ(V).
  void scale_start(double t) {
    const auto scale = static_cast<Scalar>(t);
    for (const Index i : samples_) alpha_.row(static_cast<Eigen::Index>(i)) *= scale;
    sums() *= scale;
    threshold_all();
  }

  /// The epochs until the certificate, a callback, or a budget stops them.
  template <class... Callbacks>
  SolverInfo solve(Callbacks&... callbacks) {
    Stopwatch clock;
    Rng rng(options_.seed);
    // One evaluation costs the scores of every sample over every class, nnz(X)·K; an epoch's
    // work is Σ_i nnz(x_i)·(active classes of i), so evaluations stay a bounded share.
    const double gap_cost = nnz_ * static_cast<double>(K_);
    WorkGapSchedule schedule(options_.first_trigger, gap_cost);
    SolverInfo info;
    info.measure_name = "dual_violation";
    notify_begin(callbacks...);
    // LIBLINEAR's shrinking levels: a phase on shrunk sets ends when its violation falls under
    // `shrink_level`, which halves down to the certificate's trigger.
    double shrink_level = std::max(10 * options_.first_trigger, 1.0);
    bool full_pass = true;  // every sample and class active in this epoch
    std::int64_t epoch = 0;
    while (epoch < options_.max_epochs) {
      ++epoch;
      const double violation = run_epoch(rng);
      schedule.add_work(epoch_work_);
      info.measure = violation;
      EpochReport report{epoch, std::numeric_limits<double>::quiet_NaN(), violation, -1, clock.seconds()};
      // The violation of a full pass measures every class; a shrunk pass's does not.
      const double full_violation = full_pass ? violation : std::numeric_limits<double>::infinity();
      bool certified = false;
      if (schedule.due(full_violation)) {
        const DualityGap gap = gap_spent_.timed([&] { return certificate(); });
        last_gap_ = {epoch, gap};
        report.objective = gap.primal;
        report.relative_gap = gap.relative();
        certified = gap.relative() <= options_.tol;
        schedule.evaluated(full_violation, gap.relative(), options_.tol);
      }
      const bool stop = notify_end_epoch(
          report, [&] { return LinearModel<Scalar>(W_, ClassVector<Scalar>(), labels_); }, callbacks...);
      const auto verdict = epoch_verdict(options_, std::isfinite(violation), certified, stop, report.seconds);
      if (verdict) {
        info.status = *verdict;
        break;
      }
      full_pass = violation < shrink_level || n_active_ == 0;
      if (full_pass) {
        restore_all();
        shrink_level = std::max(shrink_level / 2, schedule.trigger());
      }
    }
    info.epochs = epoch;
    info.seconds = clock.seconds();
    epochs_ = epoch;
    return info;
  }

  /// The certificate at the returned pair: the last epoch's if it evaluated one.
  [[nodiscard]] DualityGap final_certificate() {
    return last_gap_.first == epochs_ ? last_gap_.second : gap_spent_.timed([&] { return certificate(); });
  }

  /// The gap evaluations and their time.
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }

  /// F(W) and D(α) of (1) at the current pair, W summed afresh from α (`resum_weights`): one
  /// pass over X for the scores, O(dK) for ‖W‖² and ‖W‖₁. D(α) = μ (Σ_i α_{i,y_i} − h*(V)) with
  /// h*(V) = ½‖S_τ(V)‖² = ½‖W‖², the conjugate of ½‖W‖² + τ‖W‖₁ (at λ = 0, V = W).
  [[nodiscard]] DualityGap certificate() {
    resum_weights();
    const double w_sq = static_cast<double>(W_.squaredNorm());
    const double w_l1 = lambda_ > 0 ? W_.array().abs().template cast<double>().sum() : 0.0;
    // Per sample: its loss at the scores Wᵀx_i (into the running thread's buffer) and α_{i,y_i}.
    const int team = team_for_work(team_, nnz_ * static_cast<double>(K_));
    const auto [loss_sum, alpha_label] = chunk_sums<2>(team, n_, [&](std::size_t i) {
      const auto index = static_cast<Index>(i);
      ClassVector<Scalar>& scores = scores_[static_cast<std::size_t>(thread_index())];
      scores.setZero();
      for (auto [j, x] : sample_entries(problem_, index)) scores += x * W_.row(static_cast<Eigen::Index>(j)).transpose();
      const Scalar c = problem_.weight(index);
      const double loss =
          c == Scalar(0) ? 0.0
                         : static_cast<double>(c) * static_cast<double>(CrammerSinger{}.value(
                                                        std::span<const Scalar>(scores.data(), K_), problem_.y[i]));
      return std::array<double, 2>{loss, static_cast<double>(alpha_(static_cast<Eigen::Index>(i), label_[i]))};
    });
    return {loss_sum / static_cast<double>(n_) + lambda_ * w_l1 + 0.5 * mu_ * w_sq, mu_ * (alpha_label - 0.5 * w_sq)};
  }

  /// D(α) = μ (Σ_i α_{i,y_i} − ½‖W‖²) at the running W, not summed afresh (the certificate's D
  /// up to the steps' rounding): O(n + dK), no pass over X.
  [[nodiscard]] double running_dual() const {
    double alpha_label = 0.0;
    for (std::size_t i = 0; i < n_; ++i)
      alpha_label += static_cast<double>(alpha_(static_cast<Eigen::Index>(i), label_[i]));
    return mu_ * (alpha_label - 0.5 * static_cast<double>(W_.squaredNorm()));
  }

  /// W, handed over to the model (which consumes it as it is built).
  [[nodiscard]] ClassMatrix<Scalar>&& take_weights() noexcept { return std::move(W_); }

  /// Frees α and the class lists (n × K each), and V, once the certificate is taken, so that
  /// the returned model is not built on top of them.
  void release_dual() {
    alpha_ = ClassMatrix<Scalar>();
    V_ = ClassMatrix<Scalar>();
    classes_ = std::vector<Slot>();
  }

 private:
  /// The active samples in a fresh random order; a sample left with one active class leaves
  /// the epoch. Returns the largest violation met.
  double run_epoch(Rng& rng) {
    shuffle(std::span<Index>(samples_.data(), n_active_), rng);
    epoch_work_ = 0.0;
    double violation = 0.0;
    for (std::size_t s = 0; s < n_active_;) {
      const double v = visit_sample(samples_[s]);
      if (v < 0.0) {
        std::swap(samples_[s], samples_[--n_active_]);
      } else {
        violation = std::max(violation, v);
        ++s;
      }
    }
    return violation;
  }

  /// Sample i's block of the dual: its class list (a permutation of the classes whose first
  /// `active` are active, the shrunk ones after them), y_i, C_i, A_i = ‖x_i‖² and x_i.
  struct Block {
    Index i;
    Slot* classes;
    Slot& active;
    ClassIndex label;
    Scalar C, A;
    Row x;

    /// The upper bound of α_im at `slot`: C_i [m = y_i].
    [[nodiscard]] Scalar upper(ClassIndex slot) const { return classes[slot] == label ? C : Scalar(0); }
  };

  /// The extremes of G over the active classes: the smallest over the classes below their
  /// bound, the largest over all; their difference is the sample's violation.
  struct GradientRange {
    Scalar min_free = std::numeric_limits<Scalar>::infinity();
    Scalar max = -std::numeric_limits<Scalar>::infinity();
  };

  /// One sample's step (1–4 of the class comment); returns its violation, or −1 when the
  /// sample has one active class left.
  double visit_sample(Index i) {
    const auto row = static_cast<std::size_t>(i);
    const Block b{i, classes_.data() + row * K_, active_classes_[row], label_[row], cost_[row], norm_sq_[row],
                  sample_entries(problem_, i)};
    const GradientRange range = gradient(b);
    shrink_classes(b, range.min_free);
    if (b.active <= 1) return -1.0;
    const Scalar violation = range.max - range.min_free;
    if (!(violation > Scalar(min_violation))) return 0.0;
    update(b, solve_subproblem(b));
    return static_cast<double>(violation);
  }

  /// α_im at `slot` of the block's class list.
  Scalar& alpha(const Block& b, ClassIndex slot) { return alpha_(b.i, b.classes[slot]); }

  /// Step 1: G_m = w_mᵀx_i + e_im over the active classes, gathered per class or, with most
  /// classes active, from the scores of every class by contiguous (vectorised) rows of W.
  GradientRange gradient(const Block& b) {
    epoch_work_ += static_cast<double>(nonzeros_[static_cast<std::size_t>(b.i)]) * static_cast<double>(b.active);
    if (2 * static_cast<std::size_t>(b.active) > K_) {
      ClassVector<Scalar>& scores = scores_.front();
      scores.setZero();
      for (auto [j, x] : b.x) scores += x * W_.row(static_cast<Eigen::Index>(j)).transpose();
      for (ClassIndex m = 0; m < b.active; ++m)
        G_[m] = scores[b.classes[m]] + (b.classes[m] == b.label ? Scalar(0) : Scalar(1));
    } else {
      for (ClassIndex m = 0; m < b.active; ++m) G_[m] = b.classes[m] == b.label ? Scalar(0) : Scalar(1);
      for (auto [j, x] : b.x) {
        const Scalar* w = W_.data() + static_cast<std::size_t>(j) * K_;
        for (ClassIndex m = 0; m < b.active; ++m) G_[m] += w[b.classes[m]] * x;
      }
    }
    GradientRange range;
    for (ClassIndex m = 0; m < b.active; ++m) {
      if (alpha(b, m) < b.upper(m)) range.min_free = std::min(range.min_free, G_[m]);
      range.max = std::max(range.max, G_[m]);
    }
    return range;
  }

  /// Step 2: a class at its bound with G_m below every free class's G (`min_free`) stays
  /// there and moves past `active`.
  void shrink_classes(const Block& b, Scalar min_free) {
    auto shrinkable = [&](ClassIndex m) { return alpha(b, m) == b.upper(m) && G_[m] < min_free; };
    for (ClassIndex m = 0; m < b.active; ++m) {
      if (!shrinkable(m)) continue;
      // Swap in the last active class that stays.
      while (--b.active > m && shrinkable(b.active)) {
      }
      if (b.active > m) {
        std::swap(b.classes[m], b.classes[b.active]);
        std::swap(G_[m], G_[b.active]);
      }
    }
  }

  /// Step 3: the sub-problem, exactly: B = G − A_i α_i (left in B_), D = B + A_i C_i e_y, and β
  /// of Crammer & Singer's sort. Only the largest D_r enter β: a heap yields them in order,
  /// O(active + ρ log active). With λ > 0 it is the dual's upper bound in α_i, exact at λ = 0.
  Scalar solve_subproblem(const Block& b) {
    const ClassIndex active = b.active;
    for (ClassIndex m = 0; m < active; ++m) {
      B_[m] = G_[m] - b.A * alpha(b, m);
      sorted_[m] = B_[m];
      if (b.classes[m] == b.label) sorted_[m] += b.A * b.C;
    }
    const auto heap_end = [&](ClassIndex popped) { return sorted_.begin() + (active - popped); };
    std::make_heap(sorted_.begin(), heap_end(0));
    std::pop_heap(sorted_.begin(), heap_end(0));
    Scalar beta = sorted_[static_cast<std::size_t>(active - 1)] - b.A * b.C;
    ClassIndex rho = 1;
    for (; rho < active && beta < static_cast<Scalar>(rho) * sorted_.front(); ++rho) {
      beta += sorted_.front();
      std::pop_heap(sorted_.begin(), heap_end(rho));
    }
    return beta / static_cast<Scalar>(rho);
  }

  /// Step 4: α_im = min(C_i [m = y_i], (β − B_m)/A_i), and W += x_i Δα_iᵀ on the classes that
  /// moved (with λ > 0, V += x_i Δα_iᵀ and W = S_τ(V) on those entries).
  void update(const Block& b, Scalar beta) {
    std::size_t moved = 0;
    for (ClassIndex m = 0; m < b.active; ++m) {
      const Scalar next = std::min(b.upper(m), (beta - B_[m]) / b.A);
      const Scalar step = next - alpha(b, m);
      alpha(b, m) = next;
      if (std::abs(step) >= Scalar(min_step)) {
        moved_class_[moved] = b.classes[m];
        moved_by_[moved++] = step;
      }
    }
    add_to_sums(sums(), b.x, moved);
    if (lambda_ > 0) threshold_moved(b.x, moved);
  }

  /// V (W at λ = 0): the sums Σ_i x_i α_iᵀ.
  ClassMatrix<Scalar>& sums() noexcept { return lambda_ > 0 ? V_ : W_; }
  const ClassMatrix<Scalar>& sums() const noexcept { return lambda_ > 0 ? V_ : W_; }

  /// M += x (moved_by_)ᵀ on the first `moved` classes of moved_class_.
  void add_to_sums(ClassMatrix<Scalar>& M, const Row& x_i, std::size_t moved) {
    for (auto [j, x] : x_i) {
      Scalar* m = M.data() + static_cast<std::size_t>(j) * K_;
      for (std::size_t t = 0; t < moved; ++t) m[moved_class_[t]] += moved_by_[t] * x;
    }
  }

  /// W = S_τ(V) on the rows of x_i and the first `moved` classes of moved_class_.
  void threshold_moved(const Row& x_i, std::size_t moved) {
    for (auto [j, x] : x_i) {
      const std::size_t row = static_cast<std::size_t>(j) * K_;
      for (std::size_t t = 0; t < moved; ++t) {
        const std::size_t entry = row + moved_class_[t];
        W_.data()[entry] = soft_threshold(V_.data()[entry]);
      }
    }
  }

  /// S_τ(v) = sign(v) max(|v| − τ, 0).
  Scalar soft_threshold(Scalar v) const { return std::copysign(std::max(std::abs(v) - threshold_, Scalar(0)), v); }

  /// W = Σ_i x_i α_iᵀ summed afresh (with λ > 0, V so and W = S_τ(V)). The steps' updates leave rounding residue where every
  /// contribution has cancelled (a class that moved and went back to α_im = 0 leaves entries
  /// near 2⁻⁶⁰ in place of 0: two fifths of the nonzero weights at K = 1000, half at K = 8000,
  /// each stored, written and read by the model); summed afresh, W is exactly W(α) up to one
  /// sum's rounding, and the certificate, the model and the next epochs start from it. Costs
  /// Σ_i nnz(x_i)·nnz(α_i) and a pass over α, a fraction of the certificate's nnz(X)·K.
  void resum_weights() {
    ClassMatrix<Scalar>& sums = this->sums();
    sums.setZero();
    for (std::size_t i = 0; i < n_; ++i) {
      const auto alpha_i = alpha_.row(static_cast<Eigen::Index>(i));
      std::size_t moved = 0;
      for (std::size_t m = 0; m < K_; ++m) {
        if (alpha_i[static_cast<Eigen::Index>(m)] == Scalar(0)) continue;
        moved_class_[moved] = static_cast<ClassIndex>(m);
        moved_by_[moved++] = alpha_i[static_cast<Eigen::Index>(m)];
      }
      add_to_sums(sums, sample_entries(problem_, static_cast<Index>(i)), moved);
    }
    threshold_all();
  }

  /// W = S_τ(V) on every entry (nothing at λ = 0, where W is V).
  void threshold_all() {
    if (lambda_ > 0) W_ = V_.unaryExpr([this](Scalar v) { return soft_threshold(v); });
  }

  /// Every sample and class active again (before a full pass).
  void restore_all() {
    n_active_ = samples_.size();
    std::fill(active_classes_.begin(), active_classes_.end(), static_cast<Slot>(K_));
  }

  /// A sample whose violation max_m G_m − min_m G_m is at most this is optimal as it stands
  /// and left alone (LIBLINEAR's Solver_MCSVM_CS, `maxG - minG <= 1e-12`).
  static constexpr double min_violation = 1e-12;
  /// A class whose α_im moved by less than this leaves W as it is (LIBLINEAR's
  /// Solver_MCSVM_CS, `fabs(d) >= 1e-12`).
  static constexpr double min_step = 1e-12;
  /// Newton's steps of `best_start_scale` at most (each a pass over V).
  static constexpr int max_scale_steps = 50;

  const Prob& problem_;
  const Options& options_;
  double lambda_, mu_;
  Scalar threshold_;           ///< τ = λ/μ

  std::vector<Label> labels_;  ///< the model's labels
  std::size_t n_, K_;
  ClassMatrix<Scalar> W_;      ///< d × K, W = S_τ(V)
  ClassMatrix<Scalar> V_;      ///< d × K, V = Σ_i x_i α_iᵀ, held only when λ > 0 (else W = V)
  ClassMatrix<Scalar> alpha_;  ///< n × K dual variables
  /// Per sample, a permutation of the classes whose first active_classes_[i] are active.
  std::vector<Slot> classes_;
  std::vector<Slot> active_classes_;
  std::vector<ClassIndex> label_;  ///< y_i
  std::vector<Scalar> cost_;            ///< C_i = c_i/(nμ)
  std::vector<Scalar> norm_sq_;         ///< A_i = ‖x_i‖²
  /// nnz(x_i) and nnz(X), the counts of the work (a dense row's zeros are skipped, not counted)
  std::vector<std::size_t> nonzeros_;
  double nnz_ = 0.0;
  std::vector<Index> samples_;          ///< samples with something to solve; the first n_active_ are active
  std::size_t n_active_ = 0;
  // Per-sample work space (K entries each).
  std::vector<Scalar> G_, B_, sorted_;
  std::vector<ClassIndex> moved_class_;
  std::vector<Scalar> moved_by_;
  int team_;  ///< threads of the certificate's pass
  /// One scores buffer per thread: the certificate's pass, and the epochs' whole-row gradient
  /// (the first).
  std::vector<ClassVector<Scalar>> scores_;
  std::pair<std::int64_t, DualityGap> last_gap_{-1, {}};  ///< (epoch, gap) of the last evaluation
  GapCost gap_spent_;
  std::int64_t epochs_ = 0;
  double epoch_work_ = 0.0;  ///< Σ nnz(x_i)·(active classes) over this epoch's visits
};

}  // namespace sparsemc::detail
