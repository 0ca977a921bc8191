#pragma once
/// \file model_io.hpp
/// Save and load a `LinearModel` in sparsemc's native sparse text format (version 1): a
/// header of `key value` lines, then only the nonzero feature rows of W. Numbers are
/// written by `std::to_chars` in the shortest form that reads back to the same bits, so
/// save → load is exact for float and double models (docs/model-format.md has the full
/// specification). Example of a file (K = 3, two stored rows):
///
///     sparsemc-model 1
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
///     4 0.125 -1.5 0
///     17 2.5e-07 0 -0.75
///
/// - Lines end in LF (CRLF is accepted); tokens are separated by spaces or tabs.
/// - The header keys come in exactly this order. `scalar` is the type of the stored weights
///   (`float` or `double`). `intercept` is `none` or K numbers. `bias` ≥ 0 marks the last
///   feature as LIBLINEAR's constant bias feature (see ModelProvenance::bias). `loss`,
///   `penalty`, `solver`, `status` take the rest of the line (may be empty). `lambda` and `mu`
///   may be `nan` when unknown (e.g. a model imported from LIBLINEAR).
/// - `rows R` is followed by R lines `feature_index v_1 … v_K`: 0-based feature indices,
///   strictly increasing, below n_features; K finite values each.
/// - Version 2 is the same file with sparse rows: `sparsemc-model 2` on line 1, and each of the
///   R lines is `feature_index k:v …` with 0-based class indices k strictly increasing below K
///   and finite v (at least one entry). `save_model` writes version 2 when under half of the
///   stored rows' |support|·K values are nonzero (extreme classification: a row keeps a few of
///   K = 16000 classes), else version 1; both read back to the same model.
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

/// The native format versions this sparsemc writes and reads: 1 (dense rows) and 2 (sparse rows).
inline constexpr int native_model_format_version = 2;

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

/// The model as native-format text (see the file comment).
template <RealScalar Scalar>
[[nodiscard]] std::string format_model(const LinearModel<Scalar>& model) {
  const ClassIndex K = model.n_classes();
  const auto& prov = model.provenance();
  if (K < 1) throw std::invalid_argument("save_model: the model has no classes");
  detail::require_finite_values("weight", model.weights().data(), model.nnz());
  detail::require_finite_values("intercept", model.intercept().data(), model.intercept().size());
  if (!std::isfinite(prov.bias)) throw std::invalid_argument("save_model: provenance bias is not finite");
  for (auto [key, value] : {std::pair<std::string_view, const std::string*>{"loss", &prov.loss},
                            {"penalty", &prov.penalty}, {"solver", &prov.solver}, {"status", &prov.status}})
    detail::check_provenance_string(key, *value);

  // Sparse rows (version 2) when under half of the stored rows' values are nonzero.
  const bool sparse_rows = 2 * model.nnz() < model.nnz_rows() * K;
  const std::int64_t numbers = sparse_rows ? 2 * model.nnz() : model.nnz_rows() * K;
  // One pass into a string (≤ 24 characters per number), written out at once by the callers.
  std::string out;
  out.reserve(static_cast<std::size_t>(256 + 24 * (numbers + model.nnz_rows())));
  const auto line = [&out](std::string_view key) {
    out += key;
    out += ' ';
  };
  const auto text_line = [&out](std::string_view key, const std::string& value) {
    out += key;
    if (!value.empty()) (out += ' ') += value;
    out += '\n';
  };
  line("sparsemc-model");
  detail::append_number(out, sparse_rows ? 2 : 1);
  out += "\nscalar ";
  out += std::is_same_v<Scalar, float> ? "float" : "double";
  out += '\n';
  line("n_features");
  detail::append_number(out, model.n_features());
  out += '\n';
  line("n_classes");
  detail::append_number(out, K);
  out += "\nlabels";
  for (Label l : model.labels()) detail::append_number(out += ' ', l);
  out += "\nintercept";
  if (model.has_intercept()) {
    for (Eigen::Index k = 0; k < K; ++k) detail::append_number(out += ' ', model.intercept()[k]);
  } else {
    out += " none";
  }
  out += '\n';
  line("bias");
  detail::append_number(out, prov.bias);
  out += '\n';
  text_line("loss", prov.loss);
  text_line("penalty", prov.penalty);
  text_line("solver", prov.solver);
  line("lambda");
  detail::append_number(out, prov.lambda);
  out += '\n';
  line("mu");
  detail::append_number(out, prov.mu);
  out += '\n';
  text_line("status", prov.status);
  line("rows");
  detail::append_number(out, model.nnz_rows());
  out += '\n';
  std::vector<Scalar> dense_row(sparse_rows ? 0 : static_cast<std::size_t>(K), Scalar(0));
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    detail::append_number(out, model.support()[r]);
    if (sparse_rows) {
      for (auto [k, w] : model.row(r)) {
        detail::append_number(out += ' ', k);
        detail::append_number(out += ':', w);
      }
    } else {
      for (auto [k, w] : model.row(r)) dense_row[static_cast<std::size_t>(k)] = w;
      for (Scalar& w : dense_row) {
        detail::append_number(out += ' ', w);
        w = Scalar(0);
      }
    }
    out += '\n';
  }
  return out;
}

/// Writes the model in the native format to a stream.
template <RealScalar Scalar>
void save_model(const LinearModel<Scalar>& model, std::ostream& out) {
  const std::string text = format_model(model);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("save_model: the stream refused the model");
}

/// Writes the model in the native format to a file (replacing it).
template <RealScalar Scalar>
void save_model(const LinearModel<Scalar>& model, const std::filesystem::path& path) {
  detail::write_model_file(path, format_model(model));
}

/// Reads a native-format model from text; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] LinearModel<Scalar> parse_model(std::string_view text, std::string source) {
  using Vector = typename LinearModel<Scalar>::Vector;
  detail::TextCursor in(text, std::move(source));

  // Line 1: magic word and version (1: dense rows, 2: sparse rows). A future version is
  // refused here rather than misread further down.
  in.require_line("the header 'sparsemc-model 1' or 'sparsemc-model 2'");
  in.expect_keyword("sparsemc-model");
  bool sparse_rows = false;
  {
    const detail::Token t = in.expect_token("the format version");
    const auto version = in.parse<int>(t, "a format version");
    if (version != 1 && version != 2)
      in.fail(t.column, "unsupported format version " + std::to_string(version) + " (this sparsemc reads versions 1 and " +
                            std::to_string(native_model_format_version) + ")");
    sparse_rows = version == 2;
    in.expect_end_of_line("the format version");
  }

  // Each header line: keyword, value(s), end of line.
  const auto header = [&in](std::string_view key) {
    in.require_line("'" + std::string(key) + "'");
    in.expect_keyword(key);
  };

  header("scalar");
  bool file_is_float = false;
  {
    const detail::Token t = in.expect_token("'float' or 'double'");
    if (t.text == "float") file_is_float = true;
    else if (t.text != "double") in.fail(t.column, "expected 'float' or 'double', got " + detail::TextCursor::quote(t.text));
    in.expect_end_of_line("the scalar type");
  }
  // The next value of a list of `count` (weights, intercept): a float file's shortest
  // decimals are float's, so read them as float and widen (exact).
  const auto value = [&in, file_is_float](const char* what, std::int64_t index, std::int64_t count) -> Scalar {
    const detail::Token t = in.token();
    if (t.empty())
      in.fail(t.column, "expected " + std::to_string(count) + " " + what + "s, the line has " + std::to_string(index));
    if (file_is_float) return static_cast<Scalar>(in.parse<float>(t, what));
    return in.parse<Scalar>(t, what);
  };

  // Shape: d (with the bias feature, if any) and K ≥ 1, then K distinct labels.
  header("n_features");
  const detail::Token features_token = in.expect_token("the number of features");
  const auto n_features = in.parse<std::int64_t>(features_token, "a number of features");
  if (n_features < 0) in.fail(features_token.column, "the number of features must be >= 0");
  in.expect_end_of_line("n_features");

  header("n_classes");
  const detail::Token classes_token = in.expect_token("the number of classes");
  const auto K = in.parse<ClassIndex>(classes_token, "a number of classes");
  if (K < 1) in.fail(classes_token.column, "the number of classes must be >= 1");
  in.expect_end_of_line("n_classes");

  header("labels");
  std::vector<Label> labels(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) {
    const detail::Token t = in.token();
    if (t.empty()) in.fail(t.column, "expected " + std::to_string(K) + " labels, the line has " + std::to_string(k));
    labels[static_cast<std::size_t>(k)] = in.parse<Label>(t, "an integer label");
    for (ClassIndex m = 0; m < k; ++m)
      if (labels[static_cast<std::size_t>(m)] == labels[static_cast<std::size_t>(k)])
        in.fail(t.column, "label " + std::string(t.text) + " appears twice");
  }
  in.expect_end_of_line(std::to_string(K) + " labels");

  header("intercept");
  // `intercept none` (no b, has_intercept() false) differs from K zeros: both round-trip.
  Vector intercept;
  if (in.peek().text == "none") {
    in.token();
  } else {
    intercept.resize(K);
    for (ClassIndex k = 0; k < K; ++k) intercept[k] = value("intercept value", k, K);
  }
  in.expect_end_of_line("the intercept ('none' or " + std::to_string(K) + " values)");

  header("bias");
  ModelProvenance prov;
  {
    const detail::Token t = in.expect_token("the bias value");
    prov.bias = in.parse<double>(t, "a bias value");
    if (prov.bias >= 0 && n_features < 1) in.fail(t.column, "a bias feature (bias >= 0) needs n_features >= 1");
    in.expect_end_of_line("the bias value");
  }
  // Provenance: names are the rest of their line (blanks inside kept, around trimmed);
  // λ and μ may be nan (unknown), unlike every weight.
  header("loss");
  prov.loss = in.rest_of_line();
  header("penalty");
  prov.penalty = in.rest_of_line();
  header("solver");
  prov.solver = in.rest_of_line();
  header("lambda");
  prov.lambda = in.number<double>("lambda", /*allow_non_finite=*/true);
  in.expect_end_of_line("lambda");
  header("mu");
  prov.mu = in.number<double>("mu", /*allow_non_finite=*/true);
  in.expect_end_of_line("mu");
  header("status");
  prov.status = in.rest_of_line();

  header("rows");
  const detail::Token rows_token = in.expect_token("the number of stored rows");
  const auto n_rows = in.parse<std::int64_t>(rows_token, "a number of rows");
  if (n_rows < 0 || n_rows > n_features)
    in.fail(rows_token.column, "the number of rows must be in [0, n_features = " + std::to_string(n_features) + "]");
  in.expect_end_of_line("the number of rows");

  // The stored rows: `index v_1 … v_K` (version 1) or `index k:v …` (version 2), indices
  // strictly increasing (LinearModel's invariants, checked here so that errors have a position).
  std::vector<std::int64_t> support(static_cast<std::size_t>(n_rows));
  std::vector<std::int64_t> row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  if (!sparse_rows) {
    classes.resize(static_cast<std::size_t>(n_rows * K));
    weights.resize(classes.size());
  }
  for (std::int64_t r = 0; r < n_rows; ++r) {
    if (!in.next_line())
      in.fail_at_end("unexpected end of file after " + std::to_string(r) + " of " + std::to_string(n_rows) + " rows");
    const detail::Token t = in.expect_token("a feature index");
    const auto j = in.parse<std::int64_t>(t, "a feature index");
    if (j < 0 || j >= n_features)
      in.fail(t.column, "feature index " + std::to_string(j) + " is outside [0, " + std::to_string(n_features) + ")");
    if (r > 0 && j <= support[static_cast<std::size_t>(r - 1)])
      in.fail(t.column, "feature index " + std::to_string(j) + " does not increase (previous row: " +
                            std::to_string(support[static_cast<std::size_t>(r - 1)]) + ")");
    support[static_cast<std::size_t>(r)] = j;
    if (sparse_rows) {
      read_sparse_row(in, K, file_is_float, classes, weights);
    } else {
      for (ClassIndex k = 0; k < K; ++k) {
        const auto p = static_cast<std::size_t>(r * K + k);
        classes[p] = k;
        weights[p] = value("weight", k, K);
      }
      if (!in.at_end_of_line())
        in.fail(in.peek().column, "expected " + std::to_string(K) + " weights, the line has more");
    }
    row_start.push_back(sparse_rows ? static_cast<std::int64_t>(classes.size()) : (r + 1) * K);
  }
  // Only blank lines may follow: a longer row list than announced is an error, not ignored.
  while (in.next_line())
    if (!in.at_end_of_line()) in.fail(in.token().column, "unexpected content after the last of the " + std::to_string(n_rows) + " rows");

  LinearModel<Scalar> model(n_features, std::move(support), std::move(row_start), std::move(classes), std::move(weights),
                            std::move(intercept), std::move(labels));
  model.provenance() = std::move(prov);
  return model;
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
