#pragma once
/// \file staged.hpp
/// The state CalibratedLS (Algorithm 2 of Agarwal et al. 2014) and Stagewise (Algorithm 3)
/// share (implementation detail): the chain of stages they grow, the predictions Ŷ⁽ᵗ⁾ with the
/// training loss E_t there, the calibration step (11) and the epilogue that turns the chain
/// into a `StagedResult`; and Algorithm 2's residual fit (10). calibrated_ls.hpp and
/// stagewise.hpp hold the public classes, the mathematics and the loops over these steps.
///
/// Notation as in calibrated_ls.hpp: Y the targets (n × K indicators), c the sample costs,
/// Ŷ⁽ᵗ⁾ the predictions after stage t (scores with the softmax link), Ỹ the residual fit's
/// predictions before calibration, W_t (p × K, the intercept in row p − 1) a stage's linear fit.

#include <Eigen/Core>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../../model/staged_model.hpp"
#include "../../../penalty/none.hpp"
#include "../../solver_base.hpp"
#include "calibration.hpp"
#include "core.hpp"

namespace sparsemc::detail::gls {

/// The intercept b_t of a stage's fit W_t (its row p, after p feature rows), or none.
template <class Scalar>
ClassVector<Scalar> stage_intercept(const ClassMatrix<Scalar>& W, Eigen::Index p, bool intercept) {
  return intercept ? ClassVector<Scalar>(W.row(p).transpose()) : ClassVector<Scalar>();
}

/// The chain of Algorithm 2 or 3 being grown and the quantities of its iteration: the stage
/// count t, E_t, the scale E_0 of the measure and the last relative decrease (E_{t−1} − E_t)/E_0.
template <class Scalar>
struct StagedFit {
  using Model = StagedModel<Scalar>;

  std::vector<Label> labels;  ///< 0…K−1
  Model model;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> c;  ///< the sample costs c_i
  ClassMatrix<Scalar> Y;                       ///< the targets
  ClassMatrix<Scalar> Yhat;                    ///< Ŷ⁽ᵗ⁾ (0 at the start)
  ClassMatrix<Scalar> Ytilde;                  ///< Ỹ of the current stage
  ClassMatrix<Scalar> U;                       ///< the calibration basis u(Ỹ) (work space)
  std::int64_t epoch = 0;                      ///< t
  double E = std::numeric_limits<double>::quiet_NaN();
  double scale = 1.0;  ///< E_0, or 1 when E_0 = 0
  double measure = std::numeric_limits<double>::quiet_NaN();

  template <class Prob>
  StagedFit(const Prob& problem, int calibration_degree)
      : labels(cold_start_labels(problem.n_classes())),
        model(problem.n_features(), labels, calibration_degree),
        c(costs(problem)),
        Y(indicator_targets(problem)),
        Yhat(ClassMatrix<Scalar>::Zero(problem.n_samples(), problem.n_classes())),
        Ytilde(problem.n_samples(), problem.n_classes()) {}

  /// (1/n) Σ_i c_i ½‖ŷ_i − y_i‖² at the current Ŷ.
  [[nodiscard]] double square_loss() const { return gls::square_loss(Yhat, Y, c); }

  /// Starts the measure: E = the loss at the start, its scale the loss E_0 at Ŷ = 0.
  void begin(double E0, double E_start) {
    scale = E0 > 0.0 ? E0 : 1.0;
    E = E_start;
  }

  /// The calibration (11) of Ỹ and the simplex projection into Ŷ; returns W̃_t.
  ClassMatrix<Scalar> calibrate(int degree) { return gls::calibrate(Ytilde, Y, c, degree, U, Yhat); }

  /// After a stage: E_t and the relative decrease.
  void advance(double E_next) {
    measure = (E - E_next) / scale;
    E = E_next;
  }

  /// This stage's report.
  [[nodiscard]] EpochReport report(double seconds) const { return {epoch, E, measure, -1, seconds}; }

  /// The shared epilogue: the chain's provenance and the information block (no certificate
  /// of (1): duality_gap and relative_gap stay NaN).
  StagedResult<Scalar> finish(std::string_view loss, std::string_view solver, double mu, Status status,
                              const Stopwatch& clock) {
    auto& provenance = model.provenance();
    provenance.loss = std::string(loss);
    provenance.penalty = std::string(NoPenalty::name);
    provenance.solver = std::string(solver);
    provenance.lambda = 0.0;
    provenance.mu = mu;
    provenance.status = std::string(to_string(status));
    StagedResult<Scalar> result{std::move(model), {}};
    auto& info = result.info;
    info.status = status;
    info.epochs = epoch;
    info.objective = E;
    info.measure_name = "relative_decrease";
    info.measure = measure;
    info.seconds = clock.seconds();
    return result;
  }
};

/// The residual fit (10) of Algorithm 2 on a fixed design: W = (Σ̂ + μI)⁻¹ X̃ᵀC(Y − Ŷ)/n, one
/// solve with the factor of Σ̂ + μI (+ δI, see `factorise`) formed once, and Ỹ = Ŷ + X̃W.
template <class Prob>
class ResidualFit {
  using Scalar = typename Prob::scalar_type;

 public:
  ResidualFit(const Prob& problem, bool intercept, double mu, double gram_ridge,
              const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& c)
      : problem_(problem),
        P_(factorise(second_moment(problem, intercept), 1.0, mu, problem.n_features(), gram_ridge)),
        c_over_n_(c / static_cast<Scalar>(problem.n_samples())),
        D_(problem.n_samples(), problem.n_classes()),
        G_(problem.n_features() + (intercept ? 1 : 0), problem.n_classes()),
        W_(G_.rows(), G_.cols()),
        Z_(G_.rows(), G_.cols()) {}

  /// W from the residual Y − Ŷ of `fit`, and fit.Ytilde = Ŷ + X̃W.
  void operator()(StagedFit<Scalar>& fit) {
    D_.noalias() = c_over_n_.asDiagonal() * (fit.Y - fit.Yhat);
    W_.setZero();
    gradient(problem_, D_, W_, 0.0, G_);
    Z_ = G_;
    P_.solve_in_place(Z_);
    W_ = Z_;
    scores(problem_, W_, fit.Yhat, fit.Ytilde);
  }

  /// W_t of the last fit.
  [[nodiscard]] const ClassMatrix<Scalar>& W() const noexcept { return W_; }

 private:
  const Prob& problem_;
  Preconditioner<Scalar> P_;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> c_over_n_;
  ClassMatrix<Scalar> D_, G_, W_;
  SquareMatrix<Scalar> Z_;
};

}  // namespace sparsemc::detail::gls
