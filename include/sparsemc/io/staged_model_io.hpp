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

namespace detail {

/// The reader of a staged-model file: one member per part of the format, called in file order
/// by `parse_staged_model`. Counts are checked against the bytes that follow before anything is
/// sized by them; a stage's random-feature generator is drawn last (see the file comment).
template <RealScalar Scalar>
class StagedModelReader {
 public:
  using Model = StagedModel<Scalar>;

  StagedModelReader(std::string_view text, std::string source) : source_(std::move(source)), in_(text, source_) {}

  /// `sparsemc-staged-model 1` and `scalar float|double`.
  void read_version_and_scalar() {
    header("sparsemc-staged-model");
    const Token version = in_.expect_token("the format version");
    if (in_.parse<int>(version, "a format version") != staged_model_format_version)
      in_.fail(version.column, "unsupported staged-model format version " + std::string(version.text));
    in_.expect_end_of_line("the format version");
    header("scalar");
    const Token scalar = in_.expect_token("'float' or 'double'");
    file_is_float_ = scalar.text == "float";
    if (!file_is_float_ && scalar.text != "double") in_.fail(scalar.column, "expected 'float' or 'double'");
    in_.expect_end_of_line("the scalar type");
  }

  /// d, K (checked against the bytes left), K distinct labels and the calibration degree.
  void read_shape() {
    header("n_features");
    n_features_ = in_.number<std::int64_t>("the number of features");
    if (n_features_ < 0) in_.fail(0, "the number of features must be >= 0");
    in_.expect_end_of_line("n_features");
    header("n_classes");
    const Token classes = in_.expect_token("the number of classes");
    K_ = in_.parse<ClassIndex>(classes, "the number of classes");
    if (K_ < 1) in_.fail(classes.column, "the number of classes must be >= 1");
    if (K_ > in_.bytes_left() / 2 + 1)
      in_.fail(classes.column, "n_classes " + std::to_string(K_) + " is more labels than the rest of the file (" +
                                   std::to_string(in_.bytes_left()) + " bytes) can hold");
    in_.expect_end_of_line("n_classes");
    header("labels");
    std::vector<std::int64_t> columns;
    labels_.reserve(static_cast<std::size_t>(K_));
    for (ClassIndex k = 0; k < K_; ++k) {
      const Token t = in_.expect_token("a label");
      labels_.push_back(in_.parse<Label>(t, "a label"));
      columns.push_back(t.column);
    }
    if (const std::int64_t k = first_repeat(labels_); k >= 0)
      in_.fail(columns[static_cast<std::size_t>(k)],
               "label " + std::to_string(labels_[static_cast<std::size_t>(k)]) + " appears twice");
    in_.expect_end_of_line(std::to_string(K_) + " labels");
    header("calibration_degree");
    const Token degree = in_.expect_token("the calibration degree");
    degree_ = in_.parse<int>(degree, "the calibration degree");
    if (degree_ < 1) in_.fail(degree.column, "the calibration degree must be >= 1");
    in_.expect_end_of_line("calibration_degree");
  }

  /// loss, solver, μ (NaN: unknown, or what --mu accepts, a finite number >= 0) and status.
  void read_provenance() {
    header("loss");
    provenance_.loss = in_.rest_of_line();
    header("solver");
    provenance_.solver = in_.rest_of_line();
    header("mu");
    const Token t = in_.expect_token("mu");
    provenance_.mu = in_.parse<double>(t, "mu", /*allow_non_finite=*/true);
    if (!std::isnan(provenance_.mu) && !(std::isfinite(provenance_.mu) && provenance_.mu >= 0))
      in_.fail(t.column, "mu must be a number >= 0 (or nan: unknown), got " + TextCursor::quote(t.text));
    in_.expect_end_of_line("mu");
    header("status");
    provenance_.status = in_.rest_of_line();
  }

  /// `stages T`, then the model the stages are added to (its own checks of d, K and the
  /// degree are reported at the stages line).
  std::int64_t read_stage_count() {
    header("stages");
    const auto n_stages = in_.number<std::int64_t>("the number of stages");
    if (n_stages < 0) in_.fail(0, "the number of stages must be >= 0");
    in_.expect_end_of_line("stages");
    try {
      model_ = Model(n_features_, labels_, degree_);
    } catch (const std::invalid_argument& e) {
      in_.fail(0, e.what());
    }
    model_.provenance() = provenance_;
    return n_stages;
  }

  /// One stage: its features, its calibration, its embedded linear part, then (last) its
  /// random-feature generator, added to the model.
  void read_stage() {
    typename Model::Stage stage;
    read_features(stage);
    read_calibration(stage);
    const std::int64_t first_line = read_linear_part(stage);
    draw_random_features(stage);
    try {
      model_.add_stage(std::move(stage));
    } catch (const std::invalid_argument& e) {
      throw ParseError(source_, first_line, 0, e.what());
    }
  }

  /// Only blank lines may follow the last stage.
  void read_end() {
    while (in_.next_line())
      if (!in_.at_end_of_line()) in_.fail(in_.token().column, "unexpected content after the last stage");
  }

  /// The model read (the reader is spent).
  [[nodiscard]] Model model() && { return std::move(model_); }

 private:
  void header(std::string_view key) {
    in_.require_line("'" + std::string(key) + "'");
    in_.expect_keyword(key);
  }

  /// `stage original` or `stage rff SEED P BANDWIDTH`: only (seed, p, σ) for now, bounded
  /// (the generator Ω, d × p, is drawn on load and is not in the file).
  void read_features(typename Model::Stage& stage) {
    header("stage");
    const Token kind = in_.expect_token("'original' or 'rff'");
    if (kind.text == "rff") {
      const auto seed = in_.number<std::uint64_t>("the random features' seed");
      const auto p = in_.number<std::int64_t>("the number of random features");
      const auto sigma = in_.number<double>("the bandwidth");
      if (p < 1 || !(sigma > 0)) in_.fail(0, "random features need p >= 1 and a bandwidth > 0");
      if (p > max_random_feature_entries || n_features_ > max_random_feature_entries / p)
        in_.fail(0, "random features of " + std::to_string(n_features_) + " × " + std::to_string(p) +
                        " exceed the limit of " + std::to_string(max_random_feature_entries) + " generated weights");
      stage.features = Model::Features::rff;
      stage.rff.seed = seed;
      stage.rff.input_dim = n_features_;
      stage.rff.output_dim = p;
      stage.rff.bandwidth = sigma;
    } else if (kind.text != "original") {
      in_.fail(kind.column, "expected 'original' or 'rff', got " + TextCursor::quote(kind.text));
    }
    in_.expect_end_of_line("the stage's features");
  }

  /// `calibration none`, or `calibration R` (R = degree · K + 1) and R lines of K values.
  void read_calibration(typename Model::Stage& stage) {
    header("calibration");
    if (in_.peek().text == "none") {
      in_.token();
      in_.expect_end_of_line("'none'");
      return;
    }
    const auto rows = in_.number<std::int64_t>("the number of calibration rows");
    if (rows > (in_.bytes_left() + 1) / 2 / K_)
      in_.fail(0, "calibration " + std::to_string(rows) + " is more rows than the rest of the file can hold");
    if (rows != static_cast<std::int64_t>(degree_) * K_ + 1)
      in_.fail(0, "the calibration must have calibration_degree · n_classes + 1 = " +
                      std::to_string(static_cast<std::int64_t>(degree_) * K_ + 1) + " rows");
    in_.expect_end_of_line("the number of calibration rows");
    stage.calibration.resize(rows, K_);
    for (std::int64_t r = 0; r < rows; ++r) {
      in_.require_line("a calibration row");
      for (ClassIndex k = 0; k < K_; ++k) stage.calibration(r, k) = value("a calibration weight");
      in_.expect_end_of_line(std::to_string(K_) + " calibration weights");
    }
  }

  /// `model_lines L` and the L lines of the stage's native model, parsed with its errors'
  /// lines counted in the whole file. Returns the first of those lines.
  std::int64_t read_linear_part(typename Model::Stage& stage) {
    header("model_lines");
    const auto lines = in_.number<std::int64_t>("the number of model lines");
    if (lines < 1) in_.fail(0, "model_lines must be >= 1");
    if (lines > in_.bytes_left()) in_.fail(0, "model_lines " + std::to_string(lines) + " is more lines than the file has left");
    in_.expect_end_of_line("model_lines");
    const std::int64_t first_line = in_.line_number() + 1;
    std::string embedded;
    for (std::int64_t l = 0; l < lines; ++l) {
      in_.require_line("a line of the stage's model");
      (embedded += in_.rest_of_line()) += '\n';
    }
    try {
      stage.linear = parse_model<Scalar>(embedded, source_);
    } catch (const ParseError& e) {
      throw ParseError(source_, first_line - 1 + e.line(), e.column(), e.message());
    }
    return first_line;
  }

  /// The generator costs O(d · p) time and memory that the file does not pay for in bytes, so
  /// it is drawn last: only for a stage read in full whose linear part takes its p features
  /// (otherwise add_stage reports the mismatch without it). Consecutive stages on the same
  /// features (calibrated least squares on φ(x)) copy the previous stage's generator.
  void draw_random_features(typename Model::Stage& stage) const {
    if (stage.features != Model::Features::rff || stage.linear.n_features() != stage.rff.output_dim) return;
    const auto& done = model_.stages();
    const RandomFourierFeatures<Scalar> want = stage.rff;  // the four numbers (Ω not drawn yet)
    if (!done.empty() && done.back().features == Model::Features::rff && done.back().rff.seed == want.seed &&
        done.back().rff.output_dim == want.output_dim && done.back().rff.bandwidth == want.bandwidth)
      stage.rff = done.back().rff;
    else
      stage.rff = RandomFourierFeatures<Scalar>(want.seed, want.input_dim, want.output_dim, want.bandwidth);
  }

  /// The next value, in the file's scalar type (a float file's decimals read as float, widened).
  Scalar value(std::string_view what) {
    const Token t = in_.expect_token(what);
    if (file_is_float_) return static_cast<Scalar>(in_.parse<float>(t, what));
    return in_.parse<Scalar>(t, what);
  }

  std::string source_;
  TextCursor in_;
  bool file_is_float_ = false;
  std::int64_t n_features_ = 0;
  ClassIndex K_ = 0;
  std::vector<Label> labels_;
  int degree_ = 0;
  ModelProvenance provenance_;
  Model model_;
};

}  // namespace detail

/// Reads a staged model from text; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] StagedModel<Scalar> parse_staged_model(std::string_view text, std::string source) {
  detail::StagedModelReader<Scalar> reader(text, std::move(source));
  reader.read_version_and_scalar();
  reader.read_shape();
  reader.read_provenance();
  const std::int64_t n_stages = reader.read_stage_count();
  for (std::int64_t t = 0; t < n_stages; ++t) reader.read_stage();
  reader.read_end();
  return std::move(reader).model();
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
