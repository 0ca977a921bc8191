#pragma once
/// \file model_io.hpp
/// Save and load a `LinearModel` in sparsemc's native sparse text format (version 3; versions
/// 1 and 2 are read too): a header of `key value` lines, then only the nonzero feature rows of
/// W, then `end`. Numbers are written by `std::to_chars` in the shortest form that reads back
/// to the same bits, so save → load is exact for float and double models
/// (docs/model-format.md has the full specification). Example of a file (K = 3, two stored rows):
///
///     sparsemc-model 3
///     scalar double
///     n_features 181
///     n_classes 3
///     labels 1 2 3
///     intercept 0.25 -0.5 0.25
///     bias -1
///     loss logistic
///     penalty l1
///     solver fista
///     lambda 0.001
///     mu 0
///     status converged
///     rows 2
///     entries 6
///     layout dense
///     4 0.125 -1.5 0
///     17 2.5e-07 0 -0.75
///     end
///
/// - Lines end in LF (CRLF is accepted); tokens are separated by spaces or tabs.
/// - The header keys come in exactly this order. `scalar` is the type of the stored weights
///   (`float` or `double`). `intercept` is `none` or K numbers. `bias` ≥ 0 marks the last
///   feature as LIBLINEAR's constant bias feature (see ModelProvenance::bias). `loss`,
///   `penalty`, `solver`, `status` take the rest of the line (may be empty). `lambda` and `mu`
///   are numbers >= 0, or `nan` when unknown (e.g. a model imported from LIBLINEAR).
/// - `rows R` is followed by `entries E` (the stored values), `layout dense` or `layout sparse`,
///   the R row lines and a last line `end`, so that a cut file is an error wherever it is cut.
///   Dense rows are `feature_index v_1 … v_K` (E = R·K): 0-based feature indices, strictly
///   increasing, below n_features; K finite values each. Sparse rows are `feature_index k:v …`
///   with 0-based class indices k strictly increasing below K and finite v (at least one
///   entry). `save_model` writes sparse rows when under half of the stored rows' |support|·K
///   values are nonzero (extreme classification: a row keeps a few of K = 16000 classes).
/// - `save_model` writes through a buffer of about a megabyte (detail::ModelText), so a large
///   model's file is never held whole in memory; `format_model` returns the same text whole.
/// - Version 1 (dense rows) and version 2 (sparse rows) have no `entries`, `layout` or `end`
///   lines; they are read as before.
/// - Counts are checked against the bytes that follow them before anything is sized by them,
///   and nothing is sized by n_features: memory follows the stored entries.
/// - Loading a `float` file into a double model is exact; loading a `double` file into a
///   float model rounds each value once, to nearest.
///
/// Every malformed file raises `sparsemc::io::ParseError` ("file:line:column: what");
/// saving a model with non-finite weights, or provenance strings with line breaks or
/// surrounding blanks, throws `std::invalid_argument` (they could not be read back).
///
/// \code
///   #include <sparsemc/io/model_io.hpp>
///   sparsemc::io::save_model(result.model, "dna.model");
///   auto model = sparsemc::io::load_model<double>("dna.model");   // the same bits
///   auto yhat = model.predict(test.csr());
/// \endcode

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/traits.hpp"
#include "../model/linear_model.hpp"
#include "detail/model_text.hpp"
#include "parse_error.hpp"

namespace sparsemc::io {

/// The native format version this sparsemc writes (3); it reads 1, 2 and 3.
inline constexpr int native_model_format_version = 3;

namespace detail {

inline void check_provenance_string(std::string_view key, const std::string& value) {
  const bool bad_blank = !value.empty() && (value.front() == ' ' || value.front() == '\t' ||
                                            value.back() == ' ' || value.back() == '\t');
  if (value.find_first_of("\r\n") != std::string::npos || bad_blank)
    throw std::invalid_argument("save_model: provenance " + std::string(key) +
                                " must not contain line breaks or leading/trailing blanks: '" + value + "'");
}

template <class Scalar>
void require_finite_values(const char* what, const Scalar* values, std::int64_t count) {
  for (Eigen::Index i = 0; i < count; ++i)
    if (!std::isfinite(values[i])) throw std::invalid_argument(std::string("save_model: the model has a non-finite ") + what);
}

/// The rest of a version-2 row line, `k:v …` (classes strictly increasing in [0, K), finite
/// values, at least one entry), appended to `classes` / `weights`.
template <class Scalar>
void read_sparse_row(TextCursor& in, ClassIndex K, bool file_is_float, std::vector<ClassIndex>& classes,
                     std::vector<Scalar>& weights) {
  const std::size_t first = classes.size();
  Token t = in.token();
  for (; !t.empty(); t = in.token()) {
    const auto colon = t.text.find(':');
    if (colon == std::string_view::npos)
      in.fail(t.column, "expected class:weight, got " + TextCursor::quote(t.text));
    const Token k_token{t.text.substr(0, colon), t.column};
    const Token v_token{t.text.substr(colon + 1), t.column + static_cast<std::int64_t>(colon) + 1};
    if (k_token.empty()) in.fail(t.column, "expected a class index before ':'");
    if (v_token.empty()) in.fail(v_token.column, "expected a weight after ':'");
    const auto k = in.parse<ClassIndex>(k_token, "a class index");
    if (k < 0 || k >= K) in.fail(t.column, "class index " + std::to_string(k) + " is outside [0, " + std::to_string(K) + ")");
    if (classes.size() > first && k <= classes.back())
      in.fail(t.column, "class index " + std::to_string(k) + " does not increase (previous: " +
                            std::to_string(classes.back()) + ")");
    classes.push_back(k);
    weights.push_back(file_is_float ? static_cast<Scalar>(in.parse<float>(v_token, "weight"))
                                    : in.parse<Scalar>(v_token, "weight"));
  }
  if (classes.size() == first) in.fail(t.column, "expected at least one class:weight entry");
}

}  // namespace detail

namespace detail {

/// Throws std::invalid_argument when the model could not be read back: no classes, a
/// non-finite weight, intercept or bias, a provenance string with a line break or surrounding
/// blanks.
template <RealScalar Scalar>
void require_savable(const LinearModel<Scalar>& model) {
  const auto& prov = model.provenance();
  if (model.n_classes() < 1) throw std::invalid_argument("save_model: the model has no classes");
  require_finite_values("weight", model.weights().data(), model.nnz());
  require_finite_values("intercept", model.intercept().data(), model.intercept().size());
  if (!std::isfinite(prov.bias)) throw std::invalid_argument("save_model: provenance bias is not finite");
  for (auto [key, value] : {std::pair<std::string_view, const std::string*>{"loss", &prov.loss},
                            {"penalty", &prov.penalty}, {"solver", &prov.solver}, {"status", &prov.status}})
    check_provenance_string(key, *value);
}

/// The header lines of format version 3, `sparsemc-model 3` to `layout`.
template <RealScalar Scalar>
void append_model_header(std::string& out, const LinearModel<Scalar>& model, bool sparse_rows, std::int64_t entries) {
  const auto& prov = model.provenance();
  const auto number_line = [&out](std::string_view key, auto value) {
    (out += key) += ' ';
    append_number(out, value);
    out += '\n';
  };
  const auto text_line = [&out](std::string_view key, const std::string& value) {
    out += key;
    if (!value.empty()) (out += ' ') += value;
    out += '\n';
  };
  number_line("sparsemc-model", native_model_format_version);
  out += std::is_same_v<Scalar, float> ? "scalar float\n" : "scalar double\n";
  number_line("n_features", model.n_features());
  number_line("n_classes", model.n_classes());
  out += "labels";
  for (Label l : model.labels()) append_number(out += ' ', l);
  out += "\nintercept";
  if (model.has_intercept()) {
    for (Eigen::Index k = 0; k < model.n_classes(); ++k) append_number(out += ' ', model.intercept()[k]);
  } else {
    out += " none";
  }
  out += '\n';
  number_line("bias", prov.bias);
  text_line("loss", prov.loss);
  text_line("penalty", prov.penalty);
  text_line("solver", prov.solver);
  number_line("lambda", prov.lambda);
  number_line("mu", prov.mu);
  text_line("status", prov.status);
  number_line("rows", model.nnz_rows());
  // Version 3: the number of stored values and the row layout, so that a reader sizes its
  // arrays by what it can check, and an `end` line after the rows (a cut file is detected).
  number_line("entries", entries);
  out += sparse_rows ? "layout sparse\n" : "layout dense\n";
}

/// The stored rows, `index v_1 … v_K` (dense) or `index k:v …` (sparse), then `end`.
template <RealScalar Scalar>
void append_model_rows(ModelText& sink, const LinearModel<Scalar>& model, bool sparse_rows) {
  std::string& out = sink.text;
  std::vector<Scalar> dense_row(sparse_rows ? 0 : static_cast<std::size_t>(model.n_classes()), Scalar(0));
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    append_number(out, model.support()[r]);
    if (sparse_rows) {
      for (auto [k, w] : model.row(r)) {
        append_number(out += ' ', k);
        append_number(out += ':', w);
      }
    } else {
      for (auto [k, w] : model.row(r)) dense_row[static_cast<std::size_t>(k)] = w;
      for (Scalar& w : dense_row) {
        append_number(out += ' ', w);
        w = Scalar(0);
      }
    }
    out += '\n';
    sink.row_done();
  }
  out += "end\n";
  sink.finish();
}

/// The text of a model that `require_savable` accepted, into `sink`: sparse rows when under
/// half of the stored rows' values are nonzero.
template <RealScalar Scalar>
void write_model(const LinearModel<Scalar>& model, ModelText& sink) {
  const bool sparse_rows = 2 * model.nnz() < model.nnz_rows() * model.n_classes();
  const std::int64_t entries = sparse_rows ? model.nnz() : model.nnz_rows() * model.n_classes();
  sink.expect(static_cast<std::size_t>(256 + 24 * ((sparse_rows ? 2 : 1) * entries + model.nnz_rows())));
  append_model_header(sink.text, model, sparse_rows, entries);
  append_model_rows(sink, model, sparse_rows);
}

}  // namespace detail

/// The model as native-format text (see the file comment).
template <RealScalar Scalar>
[[nodiscard]] std::string format_model(const LinearModel<Scalar>& model) {
  detail::require_savable(model);
  detail::ModelText sink;
  detail::write_model(model, sink);
  return std::move(sink.text);
}

/// Writes the model in the native format to a stream, a chunk at a time.
template <RealScalar Scalar>
void save_model(const LinearModel<Scalar>& model, std::ostream& out) {
  detail::require_savable(model);
  detail::ModelText sink(out);
  detail::write_model(model, sink);
  if (!out) throw std::runtime_error("save_model: the stream refused the model");
}

/// Writes the model in the native format to a file (replacing it), a chunk at a time; a model
/// that cannot be saved is refused before the file is touched.
template <RealScalar Scalar>
void save_model(const LinearModel<Scalar>& model, const std::filesystem::path& path) {
  detail::require_savable(model);
  write_file_atomically(path, [&model](std::ostream& out) {
    detail::ModelText sink(out);
    detail::write_model(model, sink);
  });
}

namespace detail {

/// The reader of a native model file: one member per part of the format, called in file
/// order by `parse_model`. Each checks what it reads (with the position of the offending
/// token) before anything is sized by it; the counts only bound the arrays, which grow with
/// what is read.
template <RealScalar Scalar>
class NativeModelReader {
 public:
  NativeModelReader(std::string_view text, std::string source) : in_(text, std::move(source)) {}

  /// Line 1: magic word and version (1: dense rows, 2: sparse rows, 3: either, with a count of
  /// stored values and an end marker). A future version is refused here rather than misread.
  void read_version() {
    in_.require_line("the header 'sparsemc-model N' (N = 1, 2 or 3)");
    in_.expect_keyword("sparsemc-model");
    const Token t = in_.expect_token("the format version");
    version_ = in_.parse<int>(t, "a format version");
    if (version_ < 1 || version_ > native_model_format_version)
      in_.fail(t.column, "unsupported format version " + std::to_string(version_) +
                             " (this sparsemc reads versions 1 to " + std::to_string(native_model_format_version) + ")");
    in_.expect_end_of_line("the format version");
    sparse_rows_ = version_ == 2;
  }

  /// `scalar float|double`: a float file's shortest decimals are float's, read as float and
  /// widened (exact).
  void read_scalar_type() {
    header("scalar");
    const Token t = in_.expect_token("'float' or 'double'");
    if (t.text == "float") file_is_float_ = true;
    else if (t.text != "double") in_.fail(t.column, "expected 'float' or 'double', got " + TextCursor::quote(t.text));
    in_.expect_end_of_line("the scalar type");
  }

  /// d (with the bias feature, if any) and K ≥ 1. Nothing is sized by d (the model stores only
  /// its rows), and K is checked against the bytes that follow (each label takes at least two).
  void read_shape() {
    header("n_features");
    const Token features = in_.expect_token("the number of features");
    n_features_ = in_.parse<std::int64_t>(features, "a number of features");
    if (n_features_ < 0) in_.fail(features.column, "the number of features must be >= 0");
    in_.expect_end_of_line("n_features");

    header("n_classes");
    const Token classes = in_.expect_token("the number of classes");
    K_ = in_.parse<ClassIndex>(classes, "a number of classes");
    if (K_ < 1) in_.fail(classes.column, "the number of classes must be >= 1");
    if (K_ > in_.bytes_left() / 2 + 1)
      in_.fail(classes.column, "n_classes " + std::to_string(K_) + " is more labels than the rest of the file (" +
                                   std::to_string(in_.bytes_left()) + " bytes) can hold");
    in_.expect_end_of_line("n_classes");
  }

  /// K distinct integer labels.
  void read_labels() {
    header("labels");
    std::vector<std::int64_t> columns;
    labels_.reserve(static_cast<std::size_t>(K_));
    columns.reserve(static_cast<std::size_t>(K_));
    for (ClassIndex k = 0; k < K_; ++k) {
      const Token t = in_.token();
      if (t.empty()) in_.fail(t.column, "expected " + std::to_string(K_) + " labels, the line has " + std::to_string(k));
      labels_.push_back(in_.parse<Label>(t, "an integer label"));
      columns.push_back(t.column);
    }
    if (const std::int64_t k = first_repeat(labels_); k >= 0)
      in_.fail(columns[static_cast<std::size_t>(k)],
               "label " + std::to_string(labels_[static_cast<std::size_t>(k)]) + " appears twice");
    in_.expect_end_of_line(std::to_string(K_) + " labels");
  }

  /// `intercept none` (no b, has_intercept() false) differs from K zeros: both round-trip.
  void read_intercept() {
    header("intercept");
    if (in_.peek().text == "none") {
      in_.token();
    } else {
      intercept_.resize(K_);
      for (ClassIndex k = 0; k < K_; ++k) intercept_[k] = value("intercept value", k, K_);
    }
    in_.expect_end_of_line("the intercept ('none' or " + std::to_string(K_) + " values)");
  }

  /// bias, then the names (the rest of their line: blanks inside kept, around trimmed), λ, μ
  /// and the status.
  void read_provenance() {
    header("bias");
    const Token t = in_.expect_token("the bias value");
    provenance_.bias = in_.parse<double>(t, "a bias value");
    if (provenance_.bias >= 0 && n_features_ < 1)
      in_.fail(t.column, "a bias feature (bias >= 0) needs n_features >= 1");
    in_.expect_end_of_line("the bias value");
    header("loss");
    provenance_.loss = in_.rest_of_line();
    header("penalty");
    provenance_.penalty = in_.rest_of_line();
    header("solver");
    provenance_.solver = in_.rest_of_line();
    provenance_.lambda = hyper_parameter("lambda");
    provenance_.mu = hyper_parameter("mu");
    header("status");
    provenance_.status = in_.rest_of_line();
  }

  /// `rows R`, and in version 3 `entries E` (the stored values: R·K for dense rows, the pairs
  /// of sparse ones) and `layout dense|sparse`, each checked against the bytes that follow.
  void read_counts() {
    header("rows");
    const Token rows = in_.expect_token("the number of stored rows");
    n_rows_ = in_.parse<std::int64_t>(rows, "a number of rows");
    if (n_rows_ < 0 || n_rows_ > n_features_)
      in_.fail(rows.column, "the number of rows must be in [0, n_features = " + std::to_string(n_features_) + "]");
    // Every row line takes at least 4 bytes ("j v" and its line end; 3 for an unterminated last one).
    if (n_rows_ > (in_.bytes_left() + 1) / 4)
      in_.fail(rows.column, "rows " + std::to_string(n_rows_) + " is more rows than the rest of the file (" +
                                std::to_string(in_.bytes_left()) + " bytes) can hold");
    in_.expect_end_of_line("the number of rows");
    if (version_ >= 3) read_entries_and_layout();
  }

  /// The stored rows: `index v_1 … v_K` (dense) or `index k:v …` (sparse), indices strictly
  /// increasing below n_features (LinearModel's invariants, checked here so that errors have a
  /// position).
  void read_rows() {
    support_.reserve(static_cast<std::size_t>(n_rows_));
    row_start_.reserve(static_cast<std::size_t>(n_rows_) + 1);
    if (n_entries_ >= 0) {
      classes_.reserve(static_cast<std::size_t>(n_entries_));
      weights_.reserve(static_cast<std::size_t>(n_entries_));
    }
    for (std::int64_t r = 0; r < n_rows_; ++r) {
      if (!in_.next_line())
        in_.fail_at_end("unexpected end of file after " + std::to_string(r) + " of " + std::to_string(n_rows_) + " rows");
      const Token t = in_.expect_token("a feature index");
      const auto j = in_.parse<std::int64_t>(t, "a feature index");
      if (j < 0 || j >= n_features_)
        in_.fail(t.column, "feature index " + std::to_string(j) + " is outside [0, " + std::to_string(n_features_) + ")");
      if (r > 0 && j <= support_.back())
        in_.fail(t.column, "feature index " + std::to_string(j) + " does not increase (previous row: " +
                               std::to_string(support_.back()) + ")");
      support_.push_back(j);
      if (sparse_rows_) read_sparse_row(in_, K_, file_is_float_, classes_, weights_);
      else read_dense_row();
      if (n_entries_ >= 0 && static_cast<std::int64_t>(classes_.size()) > n_entries_)
        in_.fail(t.column, "more stored values than 'entries " + std::to_string(n_entries_) + "' (line " +
                               std::to_string(entries_line_) + ")");
      row_start_.push_back(static_cast<std::int64_t>(classes_.size()));
    }
    if (n_entries_ >= 0 && static_cast<std::int64_t>(classes_.size()) != n_entries_)
      in_.fail_at(entries_line_, entries_column_, "entries " + std::to_string(n_entries_) + ", but the rows hold " +
                                                      std::to_string(classes_.size()) + " values");
  }

  /// Version 3 ends with `end`: a file cut anywhere before it is an error, even inside the last
  /// weight. Only blank lines may follow (versions 1 and 2: after the rows), so a longer row
  /// list than announced is an error, not ignored.
  void read_end() {
    if (version_ >= 3) {
      bool ended = false;
      while (!ended && in_.next_line()) {
        if (in_.at_end_of_line()) continue;
        const Token t = in_.token();
        if (t.text != "end")
          in_.fail(t.column, "expected 'end' after the " + std::to_string(n_rows_) + " rows, got " +
                                 TextCursor::quote(t.text));
        in_.expect_end_of_line("'end'");
        ended = true;
      }
      if (!ended) in_.fail_at_end("unexpected end of file: no 'end' line after the rows (the file is truncated)");
    }
    while (in_.next_line())
      if (!in_.at_end_of_line())
        in_.fail(in_.token().column, version_ >= 3 ? std::string("unexpected content after 'end'")
                                                   : "unexpected content after the last of the " +
                                                         std::to_string(n_rows_) + " rows");
  }

  /// The model read (the reader is spent).
  [[nodiscard]] LinearModel<Scalar> model() && {
    LinearModel<Scalar> out(n_features_, std::move(support_), std::move(row_start_), std::move(classes_),
                            std::move(weights_), std::move(intercept_), std::move(labels_));
    out.provenance() = std::move(provenance_);
    return out;
  }

 private:
  /// A header line's keyword (its values follow).
  void header(std::string_view key) {
    in_.require_line("'" + std::string(key) + "'");
    in_.expect_keyword(key);
  }

  /// The next value of a list of `count` (weights, intercept), in the file's scalar type.
  Scalar value(const char* what, std::int64_t index, std::int64_t count) {
    const Token t = in_.token();
    if (t.empty())
      in_.fail(t.column, "expected " + std::to_string(count) + " " + what + "s, the line has " + std::to_string(index));
    if (file_is_float_) return static_cast<Scalar>(in_.parse<float>(t, what));
    return in_.parse<Scalar>(t, what);
  }

  /// λ or μ: NaN (unknown, e.g. an imported model) or what the flags accept, a finite number
  /// >= 0 (a tool evaluates the model with them).
  double hyper_parameter(const char* key) {
    header(key);
    const Token t = in_.expect_token(key);
    const double x = in_.parse<double>(t, key, /*allow_non_finite=*/true);
    if (!std::isnan(x) && !(std::isfinite(x) && x >= 0))
      in_.fail(t.column, std::string(key) + " must be a number >= 0 (or nan: unknown), got " + TextCursor::quote(t.text));
    in_.expect_end_of_line(key);
    return x;
  }

  /// Version 3's `entries E` (at least one value per row, at most K, each at least 2 bytes)
  /// and `layout dense|sparse` (dense: E = R·K).
  void read_entries_and_layout() {
    header("entries");
    const Token t = in_.expect_token("the number of stored values");
    entries_line_ = in_.line_number();
    entries_column_ = t.column;
    n_entries_ = in_.parse<std::int64_t>(t, "a number of stored values");
    if (n_entries_ < n_rows_ || (n_rows_ > 0 && (n_entries_ - 1) / n_rows_ >= K_) || (n_rows_ == 0 && n_entries_ != 0))
      in_.fail(t.column, "entries " + std::to_string(n_entries_) + " does not fit " + std::to_string(n_rows_) +
                             " rows of " + std::to_string(K_) + " classes");
    if (n_entries_ > (in_.bytes_left() + 1) / 2)
      in_.fail(t.column, "entries " + std::to_string(n_entries_) + " is more values than the rest of the file (" +
                             std::to_string(in_.bytes_left()) + " bytes) can hold");
    in_.expect_end_of_line("the number of stored values");
    header("layout");
    const Token l = in_.expect_token("'dense' or 'sparse'");
    if (l.text == "sparse") sparse_rows_ = true;
    else if (l.text != "dense") in_.fail(l.column, "expected 'dense' or 'sparse', got " + TextCursor::quote(l.text));
    if (!sparse_rows_ && n_entries_ != n_rows_ * K_)
      in_.fail_at(entries_line_, entries_column_, "entries " + std::to_string(n_entries_) +
                                                      " must be rows · n_classes = " + std::to_string(n_rows_ * K_) +
                                                      " for dense rows");
    in_.expect_end_of_line("the layout");
  }

  /// The rest of a dense row line: exactly K values.
  void read_dense_row() {
    for (ClassIndex k = 0; k < K_; ++k) {
      classes_.push_back(k);
      weights_.push_back(value("weight", k, K_));
    }
    if (!in_.at_end_of_line()) in_.fail(in_.peek().column, "expected " + std::to_string(K_) + " weights, the line has more");
  }

  TextCursor in_;
  int version_ = 0;
  bool sparse_rows_ = false;
  bool file_is_float_ = false;
  std::int64_t n_features_ = 0;
  ClassIndex K_ = 0;
  std::vector<Label> labels_;
  typename LinearModel<Scalar>::Vector intercept_;
  ModelProvenance provenance_;
  std::int64_t n_rows_ = 0;
  std::int64_t n_entries_ = -1;  ///< version 3's `entries` (−1 before version 3)
  std::int64_t entries_line_ = 0;
  std::int64_t entries_column_ = 0;
  std::vector<std::int64_t> support_;
  std::vector<std::int64_t> row_start_{0};
  std::vector<ClassIndex> classes_;
  std::vector<Scalar> weights_;
};

}  // namespace detail

/// Reads a native-format model from text; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> parse_model(std::string_view text, std::string source) {
  detail::NativeModelReader<Scalar> reader(text, std::move(source));
  reader.read_version();
  reader.read_scalar_type();
  reader.read_shape();
  reader.read_labels();
  reader.read_intercept();
  reader.read_provenance();
  reader.read_counts();
  reader.read_rows();
  reader.read_end();
  return std::move(reader).model();
}

/// Reads a native-format model from a stream; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> load_model(std::istream& in, std::string source = "<stream>") {
  return parse_model<Scalar>(detail::read_model_stream(in), std::move(source));
}

/// Reads a native-format model from a file.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> load_model(const std::filesystem::path& path) {
  return parse_model<Scalar>(detail::read_model_file(path), path.string());
}

}  // namespace sparsemc::io
