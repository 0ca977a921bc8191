#pragma once
/// \file liblinear_model.hpp
/// Import and export of LIBLINEAR's model files (the format of `liblinear-train` /
/// `liblinear-predict`, LIBLINEAR 2.x as packaged by Debian):
///
///     solver_type MCSVM_CS
///     nr_class 3
///     label 3 1 2
///     nr_feature 180
///     bias 1
///     w
///     0.011081878474254445 0.23902610176670039 -0.25010798024095554
///     ...                     (nr_feature rows, + 1 bias row when bias >= 0, nr_w values each)
///
/// LIBLINEAR scores a test sample x (features beyond nr_feature dropped, then the constant
/// feature `bias` appended when bias ≥ 0) as dec = wᵀx, summed in feature order, and
///   - nr_class = 2 (any solver_type, MCSVM_CS included): label[0] if dec_0 > 0 else label[1];
///     nr_w = 1, except MCSVM_CS, which stores 2 columns but still decides on dec_0 only;
///   - otherwise: label[argmax_k dec_k], first maximum on ties; nr_w = nr_class.
///
/// **Import** (`load_liblinear_model`) reproduces those predictions bit for bit (double):
///   - nr_class ≠ 2: classes in LIBLINEAR's label order, W = w. Same sums, same tie rule.
///   - nr_class = 2: classes (label[1], label[0]) with columns (0, w_0). Our argmax picks
///     class 1 = label[0] iff w_0ᵀx > 0 strictly — LIBLINEAR's rule including ties — and
///     for logistic solvers softmax(0, w_0ᵀx) is LIBLINEAR's sigmoid probability, so those
///     models get loss "logistic" and predict_proba agrees with `liblinear-predict -b 1`.
///     (For MCSVM_CS with 2 classes the unused second column is dropped, as LIBLINEAR ignores it.)
///   - bias ≥ 0: n_features = nr_feature + 1, provenance().bias = bias, the bias row last.
///   - provenance: loss/penalty from the solver type (L2R_LR, L1R_LR, L2R_LR_DUAL →
///     "logistic" for 2 classes, "ovr-logistic" otherwise; *_L2LOSS_SVC* → "ovr-squared-hinge";
///     L2R_L1LOSS_SVC_DUAL → "ovr-hinge"; MCSVM_CS → "crammer-singer"; L1R_* → penalty "l1",
///     else "none"), solver "liblinear:<solver_type>", λ and μ NaN (C is not stored),
///     status "imported". Regression models (…_SVR…) are rejected: they have no classes.
///   - Label order is LIBLINEAR's (first appearance in its training file), not sorted: map
///     data labels with LinearModel::class_of().
///
/// **Export** (`save_liblinear_model`) writes a file whose `liblinear-predict` predictions
/// equal ours:
///   - K ≠ 2: solver_type MCSVM_CS, nr_w = K, label = labels(), w = W. The intercept b
///     becomes LIBLINEAR's bias feature: bias 1 and a last row b (added last, as we do).
///     A model with a bias feature (provenance().bias = β ≥ 0) exports it as is (bias β).
///     Scores are then bit-identical to LinearModel<double>::decision_function.
///   - K = 2: nr_w = 1 with label (labels[1], labels[0]) and w = W_{:,1} − W_{:,0}
///     (b_1 − b_0 in the bias row): LIBLINEAR picks labels[1] iff s_1 − s_0 > 0, our rule.
///     solver_type is L2R_LR for a logistic model (so `-b 1` gives our softmax
///     probabilities) and L2R_L2LOSS_SVC_DUAL otherwise; it only selects LIBLINEAR's
///     decision rule. The difference is rounded once, so a sample whose two scores agree to
///     the last bits may be decided differently.
///   - Both an intercept and a bias feature: folded into one bias row β·w_β + b with bias 1
///     (rounded once; otherwise as above).
///   - A float model is written exactly, but liblinear-predict computes in double.
///   Needs labels and nr_feature that fit LIBLINEAR's `int` (std::invalid_argument otherwise).
///
/// \code
///   #include <sparsemc/io/liblinear_model.hpp>
///   // $ liblinear-train -s 4 -B 1 train.txt train.model
///   auto imported = sparsemc::io::load_liblinear_model<double>("train.model");
///   auto yhat = imported.predict(test.csr());         // == liblinear-predict's output file
///   sparsemc::io::save_liblinear_model(result.model, "ours.model");
///   // $ liblinear-predict test.txt ours.model out.txt   (same predictions as ours)
/// \endcode

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/traits.hpp"
#include "../model/linear_model.hpp"
#include "detail/model_text.hpp"
#include "parse_error.hpp"

namespace sparsemc::io {

namespace detail {

/// LIBLINEAR's solver_type names by number (gaps are unused numbers).
inline constexpr std::array<std::string_view, 14> liblinear_solver_names{
    "L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL", "MCSVM_CS",
    "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL", "", "", "",
    "L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"};
inline constexpr int liblinear_mcsvm_cs = 4;

inline bool liblinear_is_regression(int solver) { return solver >= 11; }
inline bool liblinear_is_logistic(int solver) { return solver == 0 || solver == 6 || solver == 7; }

inline std::string liblinear_loss(int solver, int nr_class) {
  if (liblinear_is_logistic(solver)) return nr_class == 2 ? "logistic" : "ovr-logistic";
  if (solver == liblinear_mcsvm_cs) return "crammer-singer";
  if (solver == 3) return "ovr-hinge";
  return "ovr-squared-hinge";  // 1, 2, 5
}

}  // namespace detail

/// The model as LIBLINEAR model-file text (see the file comment for the mapping).
template <RealScalar Scalar>
[[nodiscard]] std::string format_liblinear_model(const LinearModel<Scalar>& model) {
  const ClassIndex K = model.n_classes();
  if (K < 1) throw std::invalid_argument("save_liblinear_model: the model has no classes");
  for (Label l : model.labels())
    if (l < std::numeric_limits<int>::min() || l > std::numeric_limits<int>::max())
      throw std::invalid_argument("save_liblinear_model: label " + std::to_string(l) + " does not fit LIBLINEAR's int");
  const std::int64_t n_data = model.n_data_features();
  if (n_data >= std::numeric_limits<int>::max())
    throw std::invalid_argument("save_liblinear_model: " + std::to_string(n_data) + " features do not fit LIBLINEAR's int");

  const bool binary = K == 2;
  const int nr_w = binary ? 1 : K;
  // Class order in the file: LIBLINEAR's binary rule favours label[0] on dec > 0, ours class 1.
  std::vector<Label> file_labels = model.labels();
  if (binary) std::swap(file_labels[0], file_labels[1]);

  const auto& prov = model.provenance();
  const bool bias_feature = prov.bias >= 0;
  const bool intercept = model.has_intercept();
  const double file_bias = intercept ? 1.0 : (bias_feature ? prov.bias : -1.0);

  // Row j of the file (j < n_data: data feature; j == n_data: bias row), as nr_w doubles.
  std::vector<double> values(static_cast<std::size_t>(K));
  const auto model_row = [&](std::int64_t j) {
    std::fill(values.begin(), values.end(), 0.0);
    const std::int64_t r = model.row_of_feature(j);
    if (r >= 0)
      for (auto [k, w] : model.row(static_cast<std::size_t>(r))) values[static_cast<std::size_t>(k)] = static_cast<double>(w);
  };

  std::string out;
  out.reserve(static_cast<std::size_t>(128 + 24 * (n_data + 1) * nr_w));
  out += "solver_type ";
  out += binary ? (prov.loss == "logistic" ? "L2R_LR" : "L2R_L2LOSS_SVC_DUAL") : "MCSVM_CS";
  out += "\nnr_class ";
  detail::append_number(out, K);
  out += "\nlabel";
  for (Label l : file_labels) detail::append_number(out += ' ', l);
  out += "\nnr_feature ";
  detail::append_number(out, n_data);
  out += "\nbias ";
  detail::append_number(out, file_bias);
  out += "\nw\n";
  // One file row, LIBLINEAR's way: every value followed by a blank. Binary: the difference
  // of the two columns, the single column LIBLINEAR's "dec_0 > 0" rule reads.
  const auto write_values = [&] {
    if (binary) {
      detail::append_number(out, values[1] - values[0]);
      out += ' ';
    } else {
      for (double v : values) {
        detail::append_number(out, v);
        out += ' ';
      }
    }
    out += '\n';
  };
  // Dense rows for the data features (LIBLINEAR has no sparse storage)...
  for (std::int64_t j = 0; j < n_data; ++j) {
    model_row(j);
    write_values();
  }
  // ... then the bias row: the bias feature's weights, the intercept, or both folded.
  if (file_bias >= 0) {
    if (bias_feature) {
      model_row(model.n_features() - 1);
    } else {
      values.assign(values.size(), 0.0);
    }
    if (intercept) {
      for (ClassIndex k = 0; k < K; ++k) {
        const double w_bias = bias_feature ? prov.bias * values[static_cast<std::size_t>(k)] : 0.0;
        values[static_cast<std::size_t>(k)] = w_bias + static_cast<double>(model.intercept()[k]);
      }
    }
    write_values();
  }
  return out;
}

/// Writes a LIBLINEAR model file to a stream.
template <RealScalar Scalar>
void save_liblinear_model(const LinearModel<Scalar>& model, std::ostream& out) {
  const std::string text = format_liblinear_model(model);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("save_liblinear_model: the stream refused the model");
}

/// Writes a LIBLINEAR model file (replacing it).
template <RealScalar Scalar>
void save_liblinear_model(const LinearModel<Scalar>& model, const std::filesystem::path& path) {
  detail::write_model_file(path, format_liblinear_model(model));
}

/// Reads LIBLINEAR model-file text; `source` names it in error messages. Header lines may
/// come in any order before `w` (as LIBLINEAR reads them); each must appear once.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> parse_liblinear_model(std::string_view text, std::string source) {
  using RowMatrix = typename LinearModel<Scalar>::RowMatrix;
  detail::TextCursor in(text, std::move(source));

  // Header: `key value…` lines in any order up to `w`, each at most once (−1: not seen).
  int solver = -1;
  int nr_class = -1;
  std::int64_t nr_feature = -1;
  double bias = 0.0;
  bool have_bias = false;
  std::vector<Label> labels;
  bool have_labels = false;
  for (;;) {
    if (!in.next_line()) in.fail_at_end("unexpected end of file before the weights ('w')");
    if (in.at_end_of_line()) continue;
    const detail::Token key = in.token();
    const auto once = [&](bool seen) {
      if (seen) in.fail(key.column, "'" + std::string(key.text) + "' appears twice");
    };
    if (key.text == "w") {
      in.expect_end_of_line("'w'");
      const char* missing = solver < 0 ? "solver_type" : nr_class < 0 ? "nr_class" : nr_feature < 0 ? "nr_feature"
                            : !have_bias ? "bias" : !have_labels ? "label" : nullptr;
      if (missing) in.fail(key.column, std::string("'") + missing + "' must come before 'w'");
      break;
    } else if (key.text == "solver_type") {
      once(solver >= 0);
      const detail::Token t = in.expect_token("a solver type");
      for (std::size_t s = 0; s < detail::liblinear_solver_names.size(); ++s)
        if (!detail::liblinear_solver_names[s].empty() && t.text == detail::liblinear_solver_names[s]) solver = static_cast<int>(s);
      if (solver < 0) in.fail(t.column, "unknown solver type " + detail::TextCursor::quote(t.text));
      if (detail::liblinear_is_regression(solver))
        in.fail(t.column, "solver type " + std::string(t.text) + " is a regression model; only classifiers can be imported");
    } else if (key.text == "nr_class") {
      once(nr_class >= 0);
      const detail::Token t = in.expect_token("the number of classes");
      nr_class = in.parse<int>(t, "a number of classes");
      if (nr_class < 1) in.fail(t.column, "nr_class must be >= 1");
      // Checked against what follows (a label takes at least two bytes) before it sizes anything;
      // small counts are left to the more specific errors further on.
      if (nr_class > 1024 && nr_class > in.bytes_left() / 2 + 1)
        in.fail(t.column, "nr_class " + std::to_string(nr_class) + " is more labels than the rest of the file (" +
                              std::to_string(in.bytes_left()) + " bytes) can hold");
    } else if (key.text == "nr_feature") {
      once(nr_feature >= 0);
      const detail::Token t = in.expect_token("the number of features");
      nr_feature = in.parse<int>(t, "a number of features");
      if (nr_feature < 0) in.fail(t.column, "nr_feature must be >= 0");
      // One weight line per feature, at least two bytes each.
      if (nr_feature > 1024 && nr_feature > in.bytes_left() / 2 + 1)
        in.fail(t.column, "nr_feature " + std::to_string(nr_feature) + " is more weight rows than the rest of the file (" +
                              std::to_string(in.bytes_left()) + " bytes) can hold");
    } else if (key.text == "bias") {
      once(have_bias);
      bias = in.number<double>("the bias value");
      have_bias = true;
    } else if (key.text == "label") {
      once(have_labels);
      if (nr_class < 0) in.fail(key.column, "'label' must come after 'nr_class'");
      if (nr_class > in.bytes_left_on_line() / 2 + 1)
        in.fail(key.column, "expected " + std::to_string(nr_class) + " labels (nr_class), the line is too short to hold them");
      labels.reserve(static_cast<std::size_t>(nr_class));
      std::vector<std::int64_t> columns;
      columns.reserve(static_cast<std::size_t>(nr_class));
      for (int k = 0; k < nr_class; ++k) {
        const detail::Token t = in.token();
        if (t.empty()) in.fail(t.column, "expected " + std::to_string(nr_class) + " labels, the line has " + std::to_string(k));
        labels.push_back(in.parse<int>(t, "an integer label"));
        columns.push_back(t.column);
      }
      // O(K log K): a model of 10^6 labels loads in well under a second.
      if (const std::int64_t k = detail::first_repeat(labels); k >= 0)
        in.fail(columns[static_cast<std::size_t>(k)], "label " + std::to_string(labels[static_cast<std::size_t>(k)]) + " appears twice");
      have_labels = true;
    } else {
      in.fail(key.column, "unknown text in model file: " + detail::TextCursor::quote(key.text));
    }
    in.expect_end_of_line("'" + std::string(key.text) + "'");
  }

  // Weights: n_rows dense lines of nr_w values; only the nonzero rows are kept, already in
  // our column layout (binary models shifted to column 1, column 0 stays zero).
  const bool has_bias = bias >= 0;
  const std::int64_t n_rows = nr_feature + (has_bias ? 1 : 0);
  const bool binary = nr_class == 2;
  const int nr_w = (binary && solver != detail::liblinear_mcsvm_cs) ? 1 : nr_class;
  // Binary models: classes (label[1], label[0]), columns (0, w_0); see the file comment.
  const ClassIndex K = nr_class;
  const ClassIndex first_column = binary ? 1 : 0;
  std::vector<std::int64_t> support;
  std::vector<Scalar> kept;  // nonzero rows, K values each
  std::vector<Scalar> row(static_cast<std::size_t>(K));
  for (std::int64_t j = 0; j < n_rows; ++j) {
    if (!in.next_line())
      in.fail_at_end("unexpected end of file after " + std::to_string(j) + " of " + std::to_string(n_rows) + " weight rows");
    std::fill(row.begin(), row.end(), Scalar(0));
    bool nonzero = false;
    for (int k = 0; k < nr_w; ++k) {
      const detail::Token t = in.token();
      if (t.empty())
        in.fail(t.column, "expected " + std::to_string(nr_w) + " weights, the line has " + std::to_string(k));
      const auto w = static_cast<Scalar>(in.parse<double>(t, "weight"));
      if (binary && k > 0) continue;  // MCSVM_CS with 2 classes: LIBLINEAR ignores column 1
      row[static_cast<std::size_t>(first_column + k)] = w;
      nonzero = nonzero || w != Scalar(0);
    }
    if (!in.at_end_of_line()) in.fail(in.peek().column, "expected " + std::to_string(nr_w) + " weights, the line has more");
    if (nonzero) {
      support.push_back(j);
      kept.insert(kept.end(), row.begin(), row.end());
    }
  }
  while (in.next_line())
    if (!in.at_end_of_line()) in.fail(in.token().column, "unexpected content after the " + std::to_string(n_rows) + " weight rows");

  RowMatrix rows = Eigen::Map<const RowMatrix>(kept.data(), static_cast<Eigen::Index>(support.size()), K);
  // Binary: class 1 (the one a positive w_0ᵀx selects) is LIBLINEAR's label[0].
  if (binary) std::swap(labels[0], labels[1]);
  LinearModel<Scalar> model(n_rows, std::move(support), std::move(rows), {}, std::move(labels));
  auto& prov = model.provenance();
  prov.loss = detail::liblinear_loss(solver, nr_class);
  prov.penalty = (solver == 5 || solver == 6) ? "l1" : "none";
  prov.solver = "liblinear:" + std::string(detail::liblinear_solver_names[static_cast<std::size_t>(solver)]);
  prov.lambda = std::numeric_limits<double>::quiet_NaN();
  prov.mu = std::numeric_limits<double>::quiet_NaN();
  prov.status = "imported";
  prov.bias = has_bias ? bias : -1.0;
  return model;
}

/// Reads a LIBLINEAR model from a stream; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> load_liblinear_model(std::istream& in, std::string source = "<stream>") {
  return parse_liblinear_model<Scalar>(detail::read_model_stream(in), std::move(source));
}

/// Reads a LIBLINEAR model file (e.g. from `liblinear-train`).
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> load_liblinear_model(const std::filesystem::path& path) {
  return parse_liblinear_model<Scalar>(detail::read_model_file(path), path.string());
}

}  // namespace sparsemc::io
