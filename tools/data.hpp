#pragma once
/// \file data.hpp
/// The tools' side of files: reading data sets (plain, .gz, .bz2) with train/test consistency,
/// the LIBLINEAR-style bias feature, model files in both formats, and scoring a model on test
/// data (accuracy, top-k accuracy, multilabel precision@k). Every failure to read becomes an
/// InputError carrying the reader's `file:line:column: what`.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sstream>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include <sparsemc/core/stopwatch.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/io/any_model.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/io/model_io.hpp>
#include <sparsemc/model/linear_model.hpp>
#include <sparsemc/model/metrics.hpp>

#include "cli.hpp"
#include "progress.hpp"

namespace sparsemc::tools {

/// How to read one data file.
struct ReadSpec {
  bool zero_based = false;             ///< --zero-based
  std::int64_t n_features = 0;         ///< the training d for test data (0: from the file)
  const LabelEncoder* labels = nullptr;  ///< the training/model label table for test data
  bool multilabel = false;             ///< read label fields as multilabel sets
  /// With `labels`: a label outside the table is an error (sparsemc-eval) instead of joining it.
  bool unknown_labels_are_errors = false;
  /// With `n_features`: an index at or beyond it is dropped, as the model ignores it (data to
  /// predict, like LIBLINEAR's predict), instead of an error (data whose objective is asked).
  bool extra_features_ignored = false;
  /// Where a slow read is reported (sparsemc-train's progress); null: silent.
  const Progress* progress = nullptr;
};

/// Makes every heap block of `large_block_bytes` or more a mapping of its own, returned to the
/// system when freed (glibc; nothing elsewhere). By default glibc raises that threshold to the
/// largest block freed so far and keeps smaller freed blocks for reuse: the reader's pieces
/// (1–2 MB each on a file of tens of MB read on several threads) then stayed resident after
/// the join, under the solve's arrays, at the run's peak. It must hold while the file is read:
/// set only after the read, it left sector's peak unchanged (docs/sdm.md). Called first thing
/// in each tool's main().
inline void return_large_blocks_when_freed() noexcept {
#if defined(__GLIBC__)
  constexpr int large_block_bytes = 1 << 20;
  mallopt(M_MMAP_THRESHOLD, large_block_bytes);
#endif
}

/// Reads a LIBSVM/SVMlight file (plain, .gz, .bz2). Test data (`spec.labels` set) keeps the
/// given label table; a label it lacks joins the table (such a sample is never predicted right).
template <class Scalar>
Dataset<Scalar> read_dataset(const std::string& path, const ReadSpec& spec) {
  io::LibsvmOptions options;
  options.zero_based = spec.zero_based;
  // A model's d beyond the 32-bit index of the tools' data (a file may claim 10^12 features
  // and store a few rows): read any index; columns the model lacks score nothing.
  options.n_features = spec.n_features <= std::numeric_limits<std::int32_t>::max() ? spec.n_features : 0;
  options.ignore_features_beyond = spec.extra_features_ignored;
  if (spec.multilabel) options.label_format = io::LabelFormat::multilabel;
  if (spec.labels != nullptr) {
    options.labels = *spec.labels;
    options.unknown_label = spec.unknown_labels_are_errors ? io::UnknownLabel::error : io::UnknownLabel::extend;
  }
  const Stopwatch watch;
  try {
    Dataset<Scalar> data = io::read_libsvm<Scalar>(path, options);
    if (spec.progress != nullptr)
      spec.progress->file_read(path, data.n_samples(), data.n_features(), data.nnz(), watch.seconds());
    return data;
  } catch (const io::ParseError& e) {
    // The commonest surprise with a file from elsewhere: indices from 0 (scikit-learn's
    // dump_svmlight_file(zero_based=True), some exporters).
    const bool index_zero = !spec.zero_based && e.message().starts_with("feature index 0 ");
    throw InputError(e.what() + std::string(index_zero ? "; if the file's feature indices start at 0, add --zero-based" : ""));
  } catch (const std::runtime_error& e) {  // cannot open, read error
    throw InputError(e.what());
  }
}

/// The labels of a table as "1,2,3" (for messages).
inline std::string label_list(const LabelEncoder& encoder) {
  std::string s;
  for (Label l : encoder.labels()) {
    if (!s.empty()) s += ',';
    s += std::to_string(l);
  }
  return s;
}

/// --class-weight LABEL:W items (repeatable) → {label: W}; every label must occur in `encoder`.
inline std::map<Label, double> parse_class_weights(const std::vector<std::string>& items, const LabelEncoder& encoder) {
  std::map<Label, double> weights;
  for (const auto& item : items) {
    const auto colon = item.find(':');
    Label label = 0;
    double w = 0;
    if (colon == std::string::npos || !detail::parse_all(std::string_view(item).substr(0, colon), label) ||
        !detail::parse_all(std::string_view(item).substr(colon + 1), w) || !std::isfinite(w) || w < 0)
      throw UsageError("--class-weight: expects LABEL:W with an integer LABEL and a number W >= 0, got '" + item + "'");
    if (!encoder.contains(label))
      throw UsageError("--class-weight: label " + std::to_string(label) + " does not occur in the data (labels " +
                       label_list(encoder) + ")");
    weights[label] = w;
  }
  return weights;
}

/// --weights FILE: one weight per line (the format of LIBLINEAR's instance-weight extension),
/// each a finite number >= 0, as many lines as the training data has samples. A bad line is
/// reported as FILE:line:column: what.
template <class Scalar>
std::vector<Scalar> read_sample_weights(const std::string& path, std::int64_t n_samples) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open (" + std::generic_category().message(errno) + ")");
  std::vector<Scalar> weights;
  weights.reserve(static_cast<std::size_t>(n_samples));
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    const auto at = [&](std::size_t column, const std::string& what) {
      return InputError(path + ":" + std::to_string(number) + ":" + std::to_string(column + 1) + ": " + what);
    };
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) throw at(0, "expected a weight (a number >= 0), got an empty line");
    const std::size_t last = line.find_last_not_of(" \t\r");
    const std::string_view text = std::string_view(line).substr(first, last + 1 - first);
    double w = 0;
    if (!detail::parse_all(text, w) || !std::isfinite(w) || w < 0)
      throw at(first, "expected a weight (a finite number >= 0), got '" + std::string(text) + "'");
    if (static_cast<std::int64_t>(weights.size()) == n_samples)
      throw at(first, "more weights than the " + std::to_string(n_samples) + " samples of the training data");
    weights.push_back(static_cast<Scalar>(w));
  }
  if (in.bad()) throw InputError(path + ": read error");
  if (static_cast<std::int64_t>(weights.size()) != n_samples)
    throw InputError(path + ": " + std::to_string(weights.size()) + " weights for the " + std::to_string(n_samples) +
                     " samples of the training data (one weight per line, one line per sample)");
  return weights;
}

/// --init MODEL as a warm start for data with `d` features (the bias column included, when
/// `bias` >= 0) and the label table `encoder`: classes in the data's order (a LIBLINEAR model
/// lists labels as they first appeared), rows of features beyond the data dropped, the bias
/// row moved to the data's bias column, a zero intercept when the fit has one and MODEL has
/// not. Throws UsageError when MODEL cannot start this fit: other labels, a bias feature
/// without --bias, an intercept without --intercept.
template <class Scalar>
LinearModel<Scalar> align_initial_model(const LinearModel<Scalar>& model, const LabelEncoder& encoder, std::int64_t d,
                                        double bias, bool fit_intercept) {
  std::vector<Label> sorted = model.labels();
  std::sort(sorted.begin(), sorted.end());
  if (sorted != encoder.labels())
    throw UsageError("--init: the model's labels differ from the training data's (labels " + label_list(encoder) +
                     "); a warm start needs the same classes");
  const bool model_bias = model.provenance().bias >= 0;
  if (model_bias && bias < 0)
    throw UsageError("--init: the model has a bias feature (trained with --bias); give --bias too");
  if (model.has_intercept() && !fit_intercept)
    throw UsageError("--init: the model has an intercept; add --intercept (or start from a model without one)");
  // Feature j of the model → feature of the data, or −1: the data's d_data = d − [bias] features
  // keep their index, the model's bias row (its last) goes to the data's bias column.
  const std::int64_t d_data = bias >= 0 ? d - 1 : d;
  const std::int64_t model_bias_row = model_bias ? model.n_features() - 1 : -1;
  const auto feature = [&](std::int64_t j) -> std::int64_t {
    if (j == model_bias_row) return d - 1;
    return j < d_data ? j : -1;
  };
  // Class k of the model → the data's class index; each row's entries re-sorted by class.
  std::vector<ClassIndex> to_class(static_cast<std::size_t>(model.n_classes()));
  for (std::size_t k = 0; k < to_class.size(); ++k) to_class[k] = encoder.index_of(model.labels()[k]);
  std::vector<std::int64_t> support, row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  std::vector<std::pair<ClassIndex, Scalar>> entries;
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    const std::int64_t j = feature(model.support()[r]);
    if (j < 0) continue;
    entries.clear();
    for (auto [k, w] : model.row(r)) entries.emplace_back(to_class[static_cast<std::size_t>(k)], w);
    std::sort(entries.begin(), entries.end());
    support.push_back(j);
    for (auto [k, w] : entries) classes.push_back(k), weights.push_back(w);
    row_start.push_back(static_cast<std::int64_t>(classes.size()));
  }
  typename LinearModel<Scalar>::Vector intercept;
  if (fit_intercept) {
    intercept.setZero(model.n_classes());
    for (std::size_t k = 0; k < to_class.size() && model.has_intercept(); ++k)
      intercept(to_class[k]) = model.intercept()(static_cast<Eigen::Index>(k));
  }
  LinearModel<Scalar> out(d, std::move(support), std::move(row_start), std::move(classes), std::move(weights),
                          std::move(intercept), encoder.labels());
  out.provenance() = model.provenance();
  out.provenance().bias = bias;
  return out;
}

/// The data with a constant feature of value `bias` appended as column d (LIBLINEAR's -B):
/// the model then has d + 1 rows and provenance().bias = bias. Costs one copy of X.
template <class Scalar>
Dataset<Scalar> append_bias(const Dataset<Scalar>& data, double bias) {
  using Index = std::int32_t;
  const auto X = data.matrix();
  const Index n = static_cast<Index>(X.rows());
  const Index d = static_cast<Index>(X.cols());
  std::vector<Index> outer(static_cast<std::size_t>(n) + 1), inner;
  std::vector<Scalar> values;
  inner.reserve(static_cast<std::size_t>(X.nonZeros() + n));
  values.reserve(inner.capacity());
  for (Index i = 0; i < n; ++i) {
    for (typename std::remove_cvref_t<decltype(X)>::InnerIterator it(X, i); it; ++it) {
      inner.push_back(static_cast<Index>(it.col()));
      values.push_back(it.value());
    }
    inner.push_back(d);
    values.push_back(static_cast<Scalar>(bias));
    outer[static_cast<std::size_t>(i) + 1] = static_cast<Index>(inner.size());
  }
  const Eigen::Map<const CsrMatrix<Scalar, Index>> map(n, d + 1, static_cast<Index>(inner.size()), outer.data(),
                                                       inner.data(), values.data());
  return Dataset<Scalar>(CsrMatrix<Scalar, Index>(map), data.labels(), data.encoder());
}

/// Loads a model file of any format (native, LIBLINEAR or staged, recognised from its first
/// word; the file is read once, so a pipe works); errors as InputError with file:line:column.
template <class Scalar>
io::AnyModel<Scalar> load_any_model(const std::string& path) {
  try {
    return io::load_any_model<Scalar>(path);
  } catch (const std::runtime_error& e) {  // io::ParseError: file:line:column: what
    throw InputError(e.what());
  }
}

/// Loads a linear model, native or LIBLINEAR (a staged model is refused).
template <class Scalar>
LinearModel<Scalar> load_model(const std::string& path) {
  io::AnyModel<Scalar> loaded = load_any_model<Scalar>(path);
  if (auto* model = std::get_if<LinearModel<Scalar>>(&loaded)) return std::move(*model);
  throw InputError(path + ": a staged model (gls-cal, stagewise, gls on random features), where a linear model "
                          "is expected");
}

/// Saves a model in `format` ("native" or "liblinear").
template <class Scalar>
void save_model(const LinearModel<Scalar>& model, const std::string& path, const std::string& format) {
  try {
    if (path == "-") {  // stdout
      std::cout << (format == "liblinear" ? io::format_liblinear_model(model) : io::format_model(model)) << std::flush;
      if (!std::cout) throw InputError("<stdout>: write error");
    } else if (format == "liblinear")
      io::save_liblinear_model(model, path);
    else
      io::save_model(model, path);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--model-format ") + format + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
}

/// How a model does on labelled test data. Multiclass: accuracy (and top-k accuracy);
/// multilabel: precision@k (the fraction of the k best-scored labels that are true, averaged).
struct TestScore {
  bool multilabel = false;
  std::int64_t samples = 0;
  std::int64_t correct = 0;  ///< samples whose best-scored class is (one of) their true class(es)
  int k = 1;                 ///< the k of top_k
  double top_k = 0.0;        ///< multiclass: top-k accuracy; multilabel: precision@k
  [[nodiscard]] double accuracy() const { return samples ? static_cast<double>(correct) / samples : 0.0; }
};

/// The test set's class sets in the model's class indices (labels are matched as read; a label
/// the model does not know is dropped, so it can never count as predicted).
template <class Scalar>
LabelSets truth_in_model_classes(const LinearModel<Scalar>& model, const Dataset<Scalar>& test) {
  LabelSets truth(model.n_classes());
  const auto y = test.labels().view();
  std::vector<ClassIndex> set;
  for (std::size_t i = 0; i < y.size(); ++i) {
    set.clear();
    for (ClassIndex t : y[i]) {
      const ClassIndex c = model.class_of(test.encoder().label_of(t));
      if (c >= 0) set.push_back(c);
    }
    truth.push_back(set);
  }
  return truth;
}

/// Scores a model on test data given its ranking `top` (model.top_k(X, k), best first).
template <class Scalar>
TestScore score_ranking(const LinearModel<Scalar>& model, const Dataset<Scalar>& test, const ClassRanking& top) {
  const LabelSets truth = truth_in_model_classes(model, test);
  TestScore score;
  score.multilabel = test.multilabel();
  score.samples = test.n_samples();
  score.k = static_cast<int>(top.cols());
  for (Eigen::Index i = 0; i < top.rows(); ++i) {
    const auto set = truth.view()[static_cast<std::size_t>(i)];
    score.correct += std::find(set.begin(), set.end(), top(i, 0)) != set.end() ? 1 : 0;
  }
  score.top_k = score.multilabel ? metrics::precision_at_k(top, truth.view(), static_cast<ClassIndex>(top.cols()))
                                 : metrics::top_k_accuracy(top, truth.view());
  return score;
}

/// Scores a model on test data: accuracy, or precision@1 for multilabel data.
template <class Scalar>
TestScore score_model(const LinearModel<Scalar>& model, const Dataset<Scalar>& test) {
  return score_ranking(model, test, model.top_k(test.csr(), 1));
}

/// Adds test_accuracy (multiclass) or test_precision_at_k (multilabel) to a JSON summary.
inline void add_test_json(nlohmann::json& j, const TestScore& s) {
  if (s.multilabel) {
    j["test_precision_at_" + std::to_string(s.k)] = s.top_k;
  } else {
    j["test_accuracy"] = s.accuracy();
    if (s.k > 1) j["test_top_" + std::to_string(s.k) + "_accuracy"] = s.top_k;
  }
  j["test_samples"] = s.samples;
}

/// "accuracy 0.9452 (1121/1186)" or "precision@1 0.6310".
/// The score a choice of lambda maximises: accuracy (multiclass) or precision@1 (multilabel).
inline double primary_score(const TestScore& s) { return s.multilabel ? s.top_k : s.accuracy(); }

/// Its name in text and JSON: "accuracy" or "precision_at_1".
inline std::string primary_score_name(bool multilabel) { return multilabel ? "precision_at_1" : "accuracy"; }

inline std::string describe(const TestScore& s) {
  std::ostringstream os;
  os << std::setprecision(6);
  if (s.multilabel)
    os << "precision@" << s.k << ' ' << s.top_k;
  else {
    os << "accuracy " << s.accuracy() << " (" << s.correct << '/' << s.samples << ')';
    if (s.k > 1) os << "  top-" << s.k << " accuracy " << s.top_k;
  }
  return os.str();
}

}  // namespace sparsemc::tools
