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
  detail::append_number(out, native_model_format_version);
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
  // Version 3: the number of stored values and the row layout, so that a reader sizes its
  // arrays by what it can check, and an `end` line after the rows (a cut file is detected).
  line("entries");
  detail::append_number(out, numbers / (sparse_rows ? 2 : 1));
  out += sparse_rows ? "\nlayout sparse\n" : "\nlayout dense\n";
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
  out += "end\n";
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

  // Line 1: magic word and version (1: dense rows, 2: sparse rows, 3: either, with a count of
  // stored values and an end marker). A future version is refused here rather than misread.
  in.require_line("the header 'sparsemc-model N' (N = 1, 2 or 3)");
  in.expect_keyword("sparsemc-model");
  int version = 0;
  {
    const detail::Token t = in.expect_token("the format version");
    version = in.parse<int>(t, "a format version");
    if (version < 1 || version > native_model_format_version)
      in.fail(t.column, "unsupported format version " + std::to_string(version) + " (this sparsemc reads versions 1 to " +
                            std::to_string(native_model_format_version) + ")");
    in.expect_end_of_line("the format version");
  }
  bool sparse_rows = version == 2;

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

  // Shape: d (with the bias feature, if any) and K ≥ 1, then K distinct labels. Nothing is
  // sized by d (the model stores only its rows), and K is checked against the bytes that
  // follow (each label takes at least two) before anything is sized by it.
  header("n_features");
  const detail::Token features_token = in.expect_token("the number of features");
  const auto n_features = in.parse<std::int64_t>(features_token, "a number of features");
  if (n_features < 0) in.fail(features_token.column, "the number of features must be >= 0");
  in.expect_end_of_line("n_features");

  header("n_classes");
  const detail::Token classes_token = in.expect_token("the number of classes");
  const auto K = in.parse<ClassIndex>(classes_token, "a number of classes");
  if (K < 1) in.fail(classes_token.column, "the number of classes must be >= 1");
  if (K > in.bytes_left() / 2 + 1)
    in.fail(classes_token.column, "n_classes " + std::to_string(K) + " is more labels than the rest of the file (" +
                                      std::to_string(in.bytes_left()) + " bytes) can hold");
  in.expect_end_of_line("n_classes");

  header("labels");
  std::vector<Label> labels;
  std::vector<std::int64_t> label_columns;
  labels.reserve(static_cast<std::size_t>(K));
  label_columns.reserve(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) {
    const detail::Token t = in.token();
    if (t.empty()) in.fail(t.column, "expected " + std::to_string(K) + " labels, the line has " + std::to_string(k));
    labels.push_back(in.parse<Label>(t, "an integer label"));
    label_columns.push_back(t.column);
  }
  if (const std::int64_t k = detail::first_repeat(labels); k >= 0)
    in.fail(label_columns[static_cast<std::size_t>(k)], "label " + std::to_string(labels[static_cast<std::size_t>(k)]) + " appears twice");
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
  // λ and μ: NaN (unknown, e.g. an imported model) or what the flags accept, a finite
  // number >= 0 (a tool evaluates the model with them).
  const auto hyper_parameter = [&](const char* key) {
    header(key);
    const detail::Token t = in.expect_token(key);
    const double x = in.parse<double>(t, key, /*allow_non_finite=*/true);
    if (!std::isnan(x) && !(std::isfinite(x) && x >= 0))
      in.fail(t.column, std::string(key) + " must be a number >= 0 (or nan: unknown), got " + detail::TextCursor::quote(t.text));
    in.expect_end_of_line(key);
    return x;
  };
  prov.lambda = hyper_parameter("lambda");
  prov.mu = hyper_parameter("mu");
  header("status");
  prov.status = in.rest_of_line();

  header("rows");
  const detail::Token rows_token = in.expect_token("the number of stored rows");
  const auto n_rows = in.parse<std::int64_t>(rows_token, "a number of rows");
  if (n_rows < 0 || n_rows > n_features)
    in.fail(rows_token.column, "the number of rows must be in [0, n_features = " + std::to_string(n_features) + "]");
  // Every row line takes at least 4 bytes ("j v" and its line end; 3 for an unterminated last one).
  if (n_rows > (in.bytes_left() + 1) / 4)
    in.fail(rows_token.column, "rows " + std::to_string(n_rows) + " is more rows than the rest of the file (" +
                                   std::to_string(in.bytes_left()) + " bytes) can hold");
  in.expect_end_of_line("the number of rows");

  // Version 3: `entries E` (the stored values: R·K for dense rows, the pairs of sparse ones),
  // then `layout dense|sparse`.
  std::int64_t n_entries = -1;
  std::int64_t entries_line = 0, entries_column = 0;
  if (version >= 3) {
    header("entries");
    const detail::Token t = in.expect_token("the number of stored values");
    entries_line = in.line_number();
    entries_column = t.column;
    n_entries = in.parse<std::int64_t>(t, "a number of stored values");
    // At least one value per row, at most K; each takes at least 2 bytes.
    if (n_entries < n_rows || (n_rows > 0 && (n_entries - 1) / n_rows >= K) || (n_rows == 0 && n_entries != 0))
      in.fail(t.column, "entries " + std::to_string(n_entries) + " does not fit " + std::to_string(n_rows) + " rows of " +
                            std::to_string(K) + " classes");
    if (n_entries > (in.bytes_left() + 1) / 2)
      in.fail(t.column, "entries " + std::to_string(n_entries) + " is more values than the rest of the file (" +
                            std::to_string(in.bytes_left()) + " bytes) can hold");
    in.expect_end_of_line("the number of stored values");
    header("layout");
    const detail::Token l = in.expect_token("'dense' or 'sparse'");
    if (l.text == "sparse") sparse_rows = true;
    else if (l.text != "dense") in.fail(l.column, "expected 'dense' or 'sparse', got " + detail::TextCursor::quote(l.text));
    if (!sparse_rows && n_entries != n_rows * K)
      in.fail_at(entries_line, entries_column, "entries " + std::to_string(n_entries) + " must be rows · n_classes = " +
                                                    std::to_string(n_rows * K) + " for dense rows");
    in.expect_end_of_line("the layout");
  }

  // The stored rows: `index v_1 … v_K` (dense) or `index k:v …` (sparse), indices strictly
  // increasing (LinearModel's invariants, checked here so that errors have a position). The
  // arrays grow with what is read; the counts above only bound them.
  std::vector<std::int64_t> support;
  support.reserve(static_cast<std::size_t>(n_rows));
  std::vector<std::int64_t> row_start{0};
  row_start.reserve(static_cast<std::size_t>(n_rows) + 1);
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  if (n_entries >= 0) {
    classes.reserve(static_cast<std::size_t>(n_entries));
    weights.reserve(static_cast<std::size_t>(n_entries));
  }
  for (std::int64_t r = 0; r < n_rows; ++r) {
    if (!in.next_line())
      in.fail_at_end("unexpected end of file after " + std::to_string(r) + " of " + std::to_string(n_rows) + " rows");
    const detail::Token t = in.expect_token("a feature index");
    const auto j = in.parse<std::int64_t>(t, "a feature index");
    if (j < 0 || j >= n_features)
      in.fail(t.column, "feature index " + std::to_string(j) + " is outside [0, " + std::to_string(n_features) + ")");
    if (r > 0 && j <= support.back())
      in.fail(t.column, "feature index " + std::to_string(j) + " does not increase (previous row: " +
                            std::to_string(support.back()) + ")");
    support.push_back(j);
    if (sparse_rows) {
      read_sparse_row(in, K, file_is_float, classes, weights);
    } else {
      for (ClassIndex k = 0; k < K; ++k) {
        classes.push_back(k);
        weights.push_back(value("weight", k, K));
      }
      if (!in.at_end_of_line())
        in.fail(in.peek().column, "expected " + std::to_string(K) + " weights, the line has more");
    }
    if (n_entries >= 0 && static_cast<std::int64_t>(classes.size()) > n_entries)
      in.fail(t.column, "more stored values than 'entries " + std::to_string(n_entries) + "' (line " +
                            std::to_string(entries_line) + ")");
    row_start.push_back(static_cast<std::int64_t>(classes.size()));
  }
  if (n_entries >= 0 && static_cast<std::int64_t>(classes.size()) != n_entries)
    in.fail_at(entries_line, entries_column, "entries " + std::to_string(n_entries) + ", but the rows hold " +
                                                 std::to_string(classes.size()) + " values");
  // Version 3 ends with `end`: a file cut anywhere before it is an error, even inside the last
  // weight. Only blank lines may follow (versions 1 and 2: after the rows), so a longer row list
  // than announced is an error, not ignored.
  if (version >= 3) {
    bool ended = false;
    while (!ended && in.next_line()) {
      if (in.at_end_of_line()) continue;
      const detail::Token t = in.token();
      if (t.text != "end")
        in.fail(t.column, "expected 'end' after the " + std::to_string(n_rows) + " rows, got " + detail::TextCursor::quote(t.text));
      in.expect_end_of_line("'end'");
      ended = true;
    }
    if (!ended) in.fail_at_end("unexpected end of file: no 'end' line after the rows (the file is truncated)");
  }
  while (in.next_line())
    if (!in.at_end_of_line())
      in.fail(in.token().column, version >= 3 ? std::string("unexpected content after 'end'")
                                              : "unexpected content after the last of the " + std::to_string(n_rows) + " rows");

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
