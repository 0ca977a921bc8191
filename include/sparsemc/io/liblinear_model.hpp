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

/// Throws std::invalid_argument when LIBLINEAR could not read the model: no classes, a label
/// or a feature count beyond its int.
template <RealScalar Scalar>
void require_liblinear_savable(const LinearModel<Scalar>& model) {
  if (model.n_classes() < 1) throw std::invalid_argument("save_liblinear_model: the model has no classes");
  for (Label l : model.labels())
    if (l < std::numeric_limits<int>::min() || l > std::numeric_limits<int>::max())
      throw std::invalid_argument("save_liblinear_model: label " + std::to_string(l) + " does not fit LIBLINEAR's int");
  const std::int64_t n_data = model.n_data_features();
  if (n_data >= std::numeric_limits<int>::max())
    throw std::invalid_argument("save_liblinear_model: " + std::to_string(n_data) + " features do not fit LIBLINEAR's int");
}

/// The text of a model that `require_liblinear_savable` accepted, into `sink`: the header,
/// a dense row per data feature (LIBLINEAR has no sparse storage), then the bias row.
template <RealScalar Scalar>
void write_liblinear_model(const LinearModel<Scalar>& model, ModelText& sink) {
  const ClassIndex K = model.n_classes();
  const std::int64_t n_data = model.n_data_features();
  const bool binary = K == 2;
  // Class order in the file: LIBLINEAR's binary rule favours label[0] on dec > 0, ours class 1.
  std::vector<Label> file_labels = model.labels();
  if (binary) std::swap(file_labels[0], file_labels[1]);
  const auto& prov = model.provenance();
  const bool bias_feature = prov.bias >= 0;
  const bool intercept = model.has_intercept();
  const double file_bias = intercept ? 1.0 : (bias_feature ? prov.bias : -1.0);

  std::string& out = sink.text;
  sink.expect(static_cast<std::size_t>(128 + 24 * (n_data + 1) * (binary ? 1 : K)));
  out += "solver_type ";
  out += binary ? (prov.loss == "logistic" ? "L2R_LR" : "L2R_L2LOSS_SVC_DUAL") : "MCSVM_CS";
  append_number(out += "\nnr_class ", K);
  out += "\nlabel";
  for (Label l : file_labels) append_number(out += ' ', l);
  append_number(out += "\nnr_feature ", n_data);
  append_number(out += "\nbias ", file_bias);
  out += "\nw\n";

  // Row j of the file (j < n_data: data feature; j == n_data: bias row), as K doubles.
  std::vector<double> values(static_cast<std::size_t>(K));
  const auto model_row = [&](std::int64_t j) {
    std::fill(values.begin(), values.end(), 0.0);
    const std::int64_t r = model.row_of_feature(j);
    if (r >= 0)
      for (auto [k, w] : model.row(static_cast<std::size_t>(r))) values[static_cast<std::size_t>(k)] = static_cast<double>(w);
  };
  // One file row, LIBLINEAR's way: every value followed by a blank. Binary: the difference
  // of the two columns, the single column LIBLINEAR's "dec_0 > 0" rule reads.
  const auto write_values = [&] {
    if (binary) {
      append_number(out, values[1] - values[0]);
      out += ' ';
    } else {
      for (double v : values) {
        append_number(out, v);
        out += ' ';
      }
    }
    out += '\n';
    sink.row_done();
  };
  for (std::int64_t j = 0; j < n_data; ++j) {
    model_row(j);
    write_values();
  }
  // The bias row: the bias feature's weights, the intercept, or both folded.
  if (file_bias >= 0) {
    if (bias_feature) model_row(model.n_features() - 1);
    else values.assign(values.size(), 0.0);
    if (intercept) {
      for (ClassIndex k = 0; k < K; ++k) {
        const double w_bias = bias_feature ? prov.bias * values[static_cast<std::size_t>(k)] : 0.0;
        values[static_cast<std::size_t>(k)] = w_bias + static_cast<double>(model.intercept()[k]);
      }
    }
    write_values();
  }
  sink.finish();
}

}  // namespace detail

/// The model as LIBLINEAR model-file text (see the file comment for the mapping).
template <RealScalar Scalar>
[[nodiscard]] std::string format_liblinear_model(const LinearModel<Scalar>& model) {
  detail::require_liblinear_savable(model);
  detail::ModelText sink;
  detail::write_liblinear_model(model, sink);
  return std::move(sink.text);
}

/// Writes a LIBLINEAR model file to a stream, a chunk at a time.
template <RealScalar Scalar>
void save_liblinear_model(const LinearModel<Scalar>& model, std::ostream& out) {
  detail::require_liblinear_savable(model);
  detail::ModelText sink(out);
  detail::write_liblinear_model(model, sink);
  if (!out) throw std::runtime_error("save_liblinear_model: the stream refused the model");
}

/// Writes a LIBLINEAR model file (replacing it), a chunk at a time; a model LIBLINEAR could
/// not read is refused before the file is touched.
template <RealScalar Scalar>
void save_liblinear_model(const LinearModel<Scalar>& model, const std::filesystem::path& path) {
  detail::require_liblinear_savable(model);
  write_file_atomically(path, [&model](std::ostream& out) {
    detail::ModelText sink(out);
    detail::write_liblinear_model(model, sink);
  });
}

namespace detail {

/// The reader of a LIBLINEAR model file: the header lines (`key value…` in any order up to
/// `w`, each at most once, as LIBLINEAR reads them), then the weight rows, then nothing but
/// blank lines; called in that order by `parse_liblinear_model`.
template <RealScalar Scalar>
class LiblinearModelReader {
 public:
  LiblinearModelReader(std::string_view text, std::string source) : in_(text, std::move(source)) {}

  /// The header lines up to `w`, which needs every other key before it.
  void read_header() {
    for (;;) {
      if (!in_.next_line()) in_.fail_at_end("unexpected end of file before the weights ('w')");
      if (in_.at_end_of_line()) continue;
      const Token key = in_.token();
      if (key.text == "w") {
        in_.expect_end_of_line("'w'");
        const char* missing = solver_ < 0 ? "solver_type" : nr_class_ < 0 ? "nr_class" : nr_feature_ < 0 ? "nr_feature"
                              : !have_bias_ ? "bias" : !have_labels_ ? "label" : nullptr;
        if (missing) in_.fail(key.column, std::string("'") + missing + "' must come before 'w'");
        return;
      }
      if (key.text == "solver_type") read_solver_type(key);
      else if (key.text == "nr_class") read_nr_class(key);
      else if (key.text == "nr_feature") read_nr_feature(key);
      else if (key.text == "bias") read_bias(key);
      else if (key.text == "label") read_labels(key);
      else in_.fail(key.column, "unknown text in model file: " + TextCursor::quote(key.text));
      in_.expect_end_of_line("'" + std::string(key.text) + "'");
    }
  }

  /// The weights: nr_feature (+1 with a bias) dense lines of nr_w values; only the nonzero rows
  /// are kept, already in our column layout (binary models shifted to column 1, column 0 stays
  /// zero; MCSVM_CS with 2 classes writes two columns and LIBLINEAR ignores the second).
  void read_weights() {
    const std::int64_t n_rows = this->n_rows();
    const bool binary = nr_class_ == 2;
    const int nr_w = (binary && solver_ != liblinear_mcsvm_cs) ? 1 : nr_class_;
    const ClassIndex first_column = binary ? 1 : 0;
    std::vector<Scalar> row(static_cast<std::size_t>(nr_class_));
    for (std::int64_t j = 0; j < n_rows; ++j) {
      if (!in_.next_line())
        in_.fail_at_end("unexpected end of file after " + std::to_string(j) + " of " + std::to_string(n_rows) +
                        " weight rows");
      std::fill(row.begin(), row.end(), Scalar(0));
      bool nonzero = false;
      for (int k = 0; k < nr_w; ++k) {
        const Token t = in_.token();
        if (t.empty()) in_.fail(t.column, "expected " + std::to_string(nr_w) + " weights, the line has " + std::to_string(k));
        const auto w = static_cast<Scalar>(in_.parse<double>(t, "weight"));
        if (binary && k > 0) continue;
        row[static_cast<std::size_t>(first_column + k)] = w;
        nonzero = nonzero || w != Scalar(0);
      }
      if (!in_.at_end_of_line())
        in_.fail(in_.peek().column, "expected " + std::to_string(nr_w) + " weights, the line has more");
      if (nonzero) {
        support_.push_back(j);
        kept_.insert(kept_.end(), row.begin(), row.end());
      }
    }
  }

  /// Only blank lines may follow the weight rows.
  void read_end() {
    while (in_.next_line())
      if (!in_.at_end_of_line())
        in_.fail(in_.token().column, "unexpected content after the " + std::to_string(n_rows()) + " weight rows");
  }

  /// The model read, with LIBLINEAR's provenance (the reader is spent). Binary: class 1 (the
  /// one a positive w_0ᵀx selects) is LIBLINEAR's label[0]; see the file comment.
  [[nodiscard]] LinearModel<Scalar> model() && {
    using RowMatrix = typename LinearModel<Scalar>::RowMatrix;
    RowMatrix rows = Eigen::Map<const RowMatrix>(kept_.data(), static_cast<Eigen::Index>(support_.size()), nr_class_);
    if (nr_class_ == 2) std::swap(labels_[0], labels_[1]);
    LinearModel<Scalar> out(n_rows(), std::move(support_), std::move(rows), {}, std::move(labels_));
    auto& prov = out.provenance();
    prov.loss = liblinear_loss(solver_, nr_class_);
    prov.penalty = (solver_ == 5 || solver_ == 6) ? "l1" : "none";
    prov.solver = "liblinear:" + std::string(liblinear_solver_names[static_cast<std::size_t>(solver_)]);
    prov.lambda = std::numeric_limits<double>::quiet_NaN();
    prov.mu = std::numeric_limits<double>::quiet_NaN();
    prov.status = "imported";
    prov.bias = bias_ >= 0 ? bias_ : -1.0;
    return out;
  }

 private:
  /// The weight rows: one per feature, plus the bias feature's when bias >= 0.
  [[nodiscard]] std::int64_t n_rows() const noexcept { return nr_feature_ + (bias_ >= 0 ? 1 : 0); }

  void once(const Token& key, bool seen) {
    if (seen) in_.fail(key.column, "'" + std::string(key.text) + "' appears twice");
  }

  /// A classifier's solver name (regression models cannot be imported).
  void read_solver_type(const Token& key) {
    once(key, solver_ >= 0);
    const Token t = in_.expect_token("a solver type");
    for (std::size_t s = 0; s < liblinear_solver_names.size(); ++s)
      if (!liblinear_solver_names[s].empty() && t.text == liblinear_solver_names[s]) solver_ = static_cast<int>(s);
    if (solver_ < 0) in_.fail(t.column, "unknown solver type " + TextCursor::quote(t.text));
    if (liblinear_is_regression(solver_))
      in_.fail(t.column, "solver type " + std::string(t.text) + " is a regression model; only classifiers can be imported");
  }

  /// nr_class ≥ 1, checked against what follows (a label takes at least two bytes) before it
  /// sizes anything; small counts are left to the more specific errors further on.
  void read_nr_class(const Token& key) {
    once(key, nr_class_ >= 0);
    const Token t = in_.expect_token("the number of classes");
    nr_class_ = in_.parse<int>(t, "a number of classes");
    if (nr_class_ < 1) in_.fail(t.column, "nr_class must be >= 1");
    if (nr_class_ > 1024 && nr_class_ > in_.bytes_left() / 2 + 1)
      in_.fail(t.column, "nr_class " + std::to_string(nr_class_) + " is more labels than the rest of the file (" +
                             std::to_string(in_.bytes_left()) + " bytes) can hold");
  }

  /// nr_feature ≥ 0: one weight line per feature, at least two bytes each.
  void read_nr_feature(const Token& key) {
    once(key, nr_feature_ >= 0);
    const Token t = in_.expect_token("the number of features");
    nr_feature_ = in_.parse<int>(t, "a number of features");
    if (nr_feature_ < 0) in_.fail(t.column, "nr_feature must be >= 0");
    if (nr_feature_ > 1024 && nr_feature_ > in_.bytes_left() / 2 + 1)
      in_.fail(t.column, "nr_feature " + std::to_string(nr_feature_) + " is more weight rows than the rest of the file (" +
                             std::to_string(in_.bytes_left()) + " bytes) can hold");
  }

  void read_bias(const Token& key) {
    once(key, have_bias_);
    bias_ = in_.number<double>("the bias value");
    have_bias_ = true;
  }

  /// nr_class distinct integer labels, after nr_class (checked in O(K log K): a model of 10^6
  /// labels loads in well under a second).
  void read_labels(const Token& key) {
    once(key, have_labels_);
    if (nr_class_ < 0) in_.fail(key.column, "'label' must come after 'nr_class'");
    if (nr_class_ > in_.bytes_left_on_line() / 2 + 1)
      in_.fail(key.column,
               "expected " + std::to_string(nr_class_) + " labels (nr_class), the line is too short to hold them");
    labels_.reserve(static_cast<std::size_t>(nr_class_));
    std::vector<std::int64_t> columns;
    columns.reserve(static_cast<std::size_t>(nr_class_));
    for (int k = 0; k < nr_class_; ++k) {
      const Token t = in_.token();
      if (t.empty()) in_.fail(t.column, "expected " + std::to_string(nr_class_) + " labels, the line has " + std::to_string(k));
      labels_.push_back(in_.parse<int>(t, "an integer label"));
      columns.push_back(t.column);
    }
    if (const std::int64_t k = first_repeat(labels_); k >= 0)
      in_.fail(columns[static_cast<std::size_t>(k)],
               "label " + std::to_string(labels_[static_cast<std::size_t>(k)]) + " appears twice");
    have_labels_ = true;
  }

  TextCursor in_;
  int solver_ = -1;  ///< −1 (and the counts below): not seen yet
  int nr_class_ = -1;
  std::int64_t nr_feature_ = -1;
  double bias_ = 0.0;
  bool have_bias_ = false;
  std::vector<Label> labels_;
  bool have_labels_ = false;
  std::vector<std::int64_t> support_;
  std::vector<Scalar> kept_;  ///< the nonzero rows, nr_class values each
};

}  // namespace detail

/// Reads LIBLINEAR model-file text; `source` names it in error messages. Header lines may
/// come in any order before `w` (as LIBLINEAR reads them); each must appear once.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> parse_liblinear_model(std::string_view text, std::string source) {
  detail::LiblinearModelReader<Scalar> reader(text, std::move(source));
  reader.read_header();
  reader.read_weights();
  reader.read_end();
  return std::move(reader).model();
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
