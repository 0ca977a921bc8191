#pragma once
/// \file staged_model_io.hpp
/// Save and load a `StagedModel` (calibrated least squares, stagewise regression;
/// model/staged_model.hpp) as text. The file is a header, then one block per stage; each
/// stage's linear part is embedded as a complete native `sparsemc-model` text (version 3)
/// (io/model_io.hpp, docs/model-format.md), so numbers round-trip bit for bit as there:
///
///     sparsemc-staged-model 1
///     scalar double
///     n_features 784
///     n_classes 10
///     labels 0 1 2 3 4 5 6 7 8 9
///     calibration_degree 3
///     loss least-squares
///     solver stagewise
///     mu 1e-06
///     status max_iter
///     stages 2
///     stage rff 11400714819323198485 512 4.5     (features: `original`, or `rff SEED P BANDWIDTH`)
///     calibration none                           (or `calibration R` then R lines of K values)
///     model_lines 17                             (then 17 lines: the stage's native model)
///     ...
///
/// Random Fourier features are stored as (seed, p, σ) and regenerated on load (d is the
/// model's n_features): at most `max_random_feature_entries` weights, drawn only once their
/// stage has been read in full and its linear part takes the p features, so a malformed file
/// fails before that work. The file's size does not bound d · p (the linear part stores only
/// its nonzero rows): the largest generator takes tens of seconds and 2 GiB (double) to draw.
/// Errors raise `ParseError` ("file:line:column: what"; inside an embedded model the line is
/// counted in the whole file).
///
/// \code
///   #include <sparsemc/io/staged_model_io.hpp>
///   sparsemc::io::save_staged_model(result.model, "mnist.staged");
///   auto model = sparsemc::io::load_staged_model<double>("mnist.staged");
///   auto yhat = model.predict(test.csr());
/// \endcode

#include <algorithm>
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

#include "../model/staged_model.hpp"
#include "detail/model_text.hpp"
#include "model_io.hpp"
#include "parse_error.hpp"

namespace sparsemc::io {

/// The staged-model format version this sparsemc writes and reads.
inline constexpr int staged_model_format_version = 1;

/// The largest random-feature generator (d · p weights, drawn on load) a file may ask for.
inline constexpr std::int64_t max_random_feature_entries = std::int64_t{1} << 28;

/// The model as text (see the file comment).
template <RealScalar Scalar>
[[nodiscard]] std::string format_staged_model(const StagedModel<Scalar>& model) {
  using Model = StagedModel<Scalar>;
  const auto& prov = model.provenance();
  for (auto [key, value] : {std::pair<std::string_view, const std::string*>{"loss", &prov.loss},
                            {"solver", &prov.solver}, {"status", &prov.status}})
    detail::check_provenance_string(key, *value);
  std::string out = "sparsemc-staged-model ";
  detail::append_number(out, staged_model_format_version);
  out += "\nscalar ";
  out += std::is_same_v<Scalar, float> ? "float" : "double";
  detail::append_number(out += "\nn_features ", model.n_features());
  detail::append_number(out += "\nn_classes ", model.n_classes());
  out += "\nlabels";
  for (Label l : model.labels()) detail::append_number(out += ' ', l);
  detail::append_number(out += "\ncalibration_degree ", model.calibration_degree());
  out += "\nloss";
  if (!prov.loss.empty()) (out += ' ') += prov.loss;
  out += "\nsolver";
  if (!prov.solver.empty()) (out += ' ') += prov.solver;
  detail::append_number(out += "\nmu ", prov.mu);
  out += "\nstatus";
  if (!prov.status.empty()) (out += ' ') += prov.status;
  detail::append_number(out += "\nstages ", static_cast<std::int64_t>(model.stages().size()));
  out += '\n';
  for (const auto& stage : model.stages()) {
    if (stage.features == Model::Features::original) {
      out += "stage original\n";
    } else {
      detail::append_number(out += "stage rff ", stage.rff.seed);
      detail::append_number(out += ' ', stage.rff.output_dim);
      detail::append_number(out += ' ', stage.rff.bandwidth);
      out += '\n';
    }
    if (stage.calibration.size() == 0) {
      out += "calibration none\n";
    } else {
      detail::require_finite_values("calibration weight", stage.calibration.data(), stage.calibration.size());
      detail::append_number(out += "calibration ", static_cast<std::int64_t>(stage.calibration.rows()));
      out += '\n';
      for (Eigen::Index r = 0; r < stage.calibration.rows(); ++r) {
        for (Eigen::Index k = 0; k < stage.calibration.cols(); ++k) {
          if (k > 0) out += ' ';
          detail::append_number(out, stage.calibration(r, k));
        }
        out += '\n';
      }
    }
    std::string linear = format_model(stage.linear);
    if (!linear.empty() && linear.back() == '\n') linear.pop_back();
    const auto lines = static_cast<std::int64_t>(std::count(linear.begin(), linear.end(), '\n')) + 1;
    detail::append_number(out += "model_lines ", lines);
    ((out += '\n') += linear) += '\n';
  }
  return out;
}

/// Writes the model to a file (replacing it).
template <RealScalar Scalar>
void save_staged_model(const StagedModel<Scalar>& model, const std::filesystem::path& path) {
  detail::write_model_file(path, format_staged_model(model));
}

/// Writes the model to a stream.
template <RealScalar Scalar>
void save_staged_model(const StagedModel<Scalar>& model, std::ostream& out) {
  const std::string text = format_staged_model(model);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("save_staged_model: the stream refused the model");
}

/// True when `text` starts like a staged model (for tools that accept both model kinds).
[[nodiscard]] inline bool is_staged_model_text(std::string_view text) {
  return text.substr(0, 22) == "sparsemc-staged-model ";
}

/// Reads a staged model from text; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] StagedModel<Scalar> parse_staged_model(std::string_view text, std::string source) {
  using Model = StagedModel<Scalar>;
  detail::TextCursor in(text, source);
  const auto header = [&in](std::string_view key) {
    in.require_line("'" + std::string(key) + "'");
    in.expect_keyword(key);
  };
  header("sparsemc-staged-model");
  {
    const detail::Token t = in.expect_token("the format version");
    if (in.parse<int>(t, "a format version") != staged_model_format_version)
      in.fail(t.column, "unsupported staged-model format version " + std::string(t.text));
    in.expect_end_of_line("the format version");
  }
  header("scalar");
  const detail::Token scalar = in.expect_token("'float' or 'double'");
  const bool file_is_float = scalar.text == "float";
  if (!file_is_float && scalar.text != "double") in.fail(scalar.column, "expected 'float' or 'double'");
  in.expect_end_of_line("the scalar type");
  const auto value = [&in, file_is_float](std::string_view what) -> Scalar {
    const detail::Token t = in.expect_token(what);
    if (file_is_float) return static_cast<Scalar>(in.parse<float>(t, what));
    return in.parse<Scalar>(t, what);
  };
  header("n_features");
  const auto n_features = in.number<std::int64_t>("the number of features");
  if (n_features < 0) in.fail(0, "the number of features must be >= 0");
  in.expect_end_of_line("n_features");
  header("n_classes");
  const detail::Token classes_token = in.expect_token("the number of classes");
  const auto K = in.parse<ClassIndex>(classes_token, "the number of classes");
  if (K < 1) in.fail(classes_token.column, "the number of classes must be >= 1");
  // Counts are checked against the bytes that follow before anything is sized by them.
  if (K > in.bytes_left() / 2 + 1)
    in.fail(classes_token.column, "n_classes " + std::to_string(K) + " is more labels than the rest of the file (" +
                                      std::to_string(in.bytes_left()) + " bytes) can hold");
  in.expect_end_of_line("n_classes");
  header("labels");
  std::vector<Label> labels;
  std::vector<std::int64_t> label_columns;
  labels.reserve(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) {
    const detail::Token t = in.expect_token("a label");
    labels.push_back(in.parse<Label>(t, "a label"));
    label_columns.push_back(t.column);
  }
  if (const std::int64_t k = detail::first_repeat(labels); k >= 0)
    in.fail(label_columns[static_cast<std::size_t>(k)], "label " + std::to_string(labels[static_cast<std::size_t>(k)]) + " appears twice");
  in.expect_end_of_line(std::to_string(K) + " labels");
  header("calibration_degree");
  const detail::Token degree_token = in.expect_token("the calibration degree");
  const int degree = in.parse<int>(degree_token, "the calibration degree");
  if (degree < 1) in.fail(degree_token.column, "the calibration degree must be >= 1");
  in.expect_end_of_line("calibration_degree");
  ModelProvenance prov;
  header("loss");
  prov.loss = in.rest_of_line();
  header("solver");
  prov.solver = in.rest_of_line();
  header("mu");
  {
    // μ: NaN (unknown) or what --mu accepts, a finite number >= 0.
    const detail::Token t = in.expect_token("mu");
    prov.mu = in.parse<double>(t, "mu", /*allow_non_finite=*/true);
    if (!std::isnan(prov.mu) && !(std::isfinite(prov.mu) && prov.mu >= 0))
      in.fail(t.column, "mu must be a number >= 0 (or nan: unknown), got " + detail::TextCursor::quote(t.text));
  }
  in.expect_end_of_line("mu");
  header("status");
  prov.status = in.rest_of_line();
  header("stages");
  const auto n_stages = in.number<std::int64_t>("the number of stages");
  if (n_stages < 0) in.fail(0, "the number of stages must be >= 0");
  in.expect_end_of_line("stages");

  Model model = [&] {
    try {
      return Model(n_features, labels, degree);
    } catch (const std::invalid_argument& e) {
      in.fail(0, e.what());
    }
  }();
  model.provenance() = prov;
  for (std::int64_t t = 0; t < n_stages; ++t) {
    typename Model::Stage stage;
    header("stage");
    const detail::Token kind = in.expect_token("'original' or 'rff'");
    if (kind.text == "rff") {
      const auto seed = in.number<std::uint64_t>("the random features' seed");
      const auto p = in.number<std::int64_t>("the number of random features");
      const auto sigma = in.number<double>("the bandwidth");
      if (p < 1 || !(sigma > 0)) in.fail(0, "random features need p >= 1 and a bandwidth > 0");
      // The generator Ω (d × p) is drawn on load: bound it, as it is not in the file.
      if (p > max_random_feature_entries || n_features > max_random_feature_entries / p)
        in.fail(0, "random features of " + std::to_string(n_features) + " × " + std::to_string(p) +
                       " exceed the limit of " + std::to_string(max_random_feature_entries) + " generated weights");
      // Only (seed, p, σ) for now: Ω is drawn once the whole stage has been read (below).
      stage.features = Model::Features::rff;
      stage.rff.seed = seed;
      stage.rff.input_dim = n_features;
      stage.rff.output_dim = p;
      stage.rff.bandwidth = sigma;
    } else if (kind.text != "original") {
      in.fail(kind.column, "expected 'original' or 'rff', got " + detail::TextCursor::quote(kind.text));
    }
    in.expect_end_of_line("the stage's features");
    header("calibration");
    if (in.peek().text == "none") {
      in.token();
      in.expect_end_of_line("'none'");
    } else {
      const auto rows = in.number<std::int64_t>("the number of calibration rows");
      if (rows > (in.bytes_left() + 1) / 2 / K)
        in.fail(0, "calibration " + std::to_string(rows) + " is more rows than the rest of the file can hold");
      if (rows != static_cast<std::int64_t>(degree) * K + 1)
        in.fail(0, "the calibration must have calibration_degree · n_classes + 1 = " +
                       std::to_string(static_cast<std::int64_t>(degree) * K + 1) + " rows");
      in.expect_end_of_line("the number of calibration rows");
      stage.calibration.resize(rows, K);
      for (std::int64_t r = 0; r < rows; ++r) {
        in.require_line("a calibration row");
        for (ClassIndex k = 0; k < K; ++k) stage.calibration(r, k) = value("a calibration weight");
        in.expect_end_of_line(std::to_string(K) + " calibration weights");
      }
    }
    header("model_lines");
    const auto lines = in.number<std::int64_t>("the number of model lines");
    if (lines < 1) in.fail(0, "model_lines must be >= 1");
    if (lines > in.bytes_left()) in.fail(0, "model_lines " + std::to_string(lines) + " is more lines than the file has left");
    in.expect_end_of_line("model_lines");
    const std::int64_t first_line = in.line_number() + 1;
    std::string embedded;
    for (std::int64_t l = 0; l < lines; ++l) {
      in.require_line("a line of the stage's model");
      (embedded += in.rest_of_line()) += '\n';
    }
    try {
      stage.linear = parse_model<Scalar>(embedded, source);
    } catch (const ParseError& e) {
      throw ParseError(source, first_line - 1 + e.line(), e.column(), e.message());
    }
    // The generator costs O(d · p) time and memory that the file does not pay for in bytes,
    // so it is drawn last: only for a stage that has been read in full and whose linear part
    // takes its p features (otherwise add_stage reports the mismatch without it).
    if (stage.features == Model::Features::rff && stage.linear.n_features() == stage.rff.output_dim) {
      // Consecutive stages on the same features (calibrated least squares on φ(x)) copy the
      // previous stage's generator instead of drawing it again.
      const auto& done = model.stages();
      const RandomFourierFeatures<Scalar> want = stage.rff;  // the four numbers (Ω not drawn yet)
      if (!done.empty() && done.back().features == Model::Features::rff && done.back().rff.seed == want.seed &&
          done.back().rff.output_dim == want.output_dim && done.back().rff.bandwidth == want.bandwidth)
        stage.rff = done.back().rff;
      else
        stage.rff = RandomFourierFeatures<Scalar>(want.seed, want.input_dim, want.output_dim, want.bandwidth);
    }
    try {
      model.add_stage(std::move(stage));
    } catch (const std::invalid_argument& e) {
      throw ParseError(source, first_line, 0, e.what());
    }
  }
  while (in.next_line())
    if (!in.at_end_of_line()) in.fail(in.token().column, "unexpected content after the last stage");
  return model;
}

/// Reads a staged model from a file.
template <RealScalar Scalar = double>
[[nodiscard]] StagedModel<Scalar> load_staged_model(const std::filesystem::path& path) {
  return parse_staged_model<Scalar>(detail::read_model_file(path), path.string());
}

/// Reads a staged model from a stream; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] StagedModel<Scalar> load_staged_model(std::istream& in, std::string source = "<stream>") {
  return parse_staged_model<Scalar>(detail::read_model_stream(in), std::move(source));
}

}  // namespace sparsemc::io
