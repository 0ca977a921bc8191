#pragma once
/// \file libsvm_reader.hpp
/// Reads LIBSVM / SVMlight text into a `Dataset` (CSR X, class sets, label table). Core part:
/// Eigen and the standard library only. Compressed files (.gz, .bz2) are read by
/// `io/compressed.hpp` (target `sparsemc::io`); `io/libsvm.hpp` picks by file extension.
///
/// Grammar, one sample per line:
///
///     line      := [labels] { blank feature } [blank] ['#' comment]
///     labels    := label { ',' label }           (a multilabel line may have no label)
///     feature   := index ':' value                (indices strictly increasing)
///     blank     := ' ' | '\t' | '\r'              (so CRLF line ends are accepted)
///
/// - Labels are integers as written: `3`, `-1`, `+1`; integral reals such as `1.0` or `2e0`
///   are accepted too, anything else (`1.5`, `abc`) is an error. Labels map to class indices
///   0..K−1 in increasing label order (see `LabelEncoder`).
/// - Indices are 1-based by default (LIBSVM) or 0-based; values are decimal reals (a leading
///   `+` is accepted, `nan` and `inf` are not). An SVMlight `qid:N` right after the labels is
///   checked to be an integer and otherwise ignored. Explicit zeros are kept as stored entries.
/// - Blank lines and comment-only lines are skipped; they still count in line numbers.
/// - Multilabel files (`l1,l2,... idx:val ...`, a line may have no label) are detected by a
///   comma in some label field, or forced through `LibsvmOptions::label_format`. Otherwise
///   the file is multiclass and a line without a label is an error at its position (a line
///   that starts with a blank and a feature does not make a file multilabel: it is what one
///   deleted byte does to a multiclass line). Duplicate labels within one line are merged.
/// - A value below the smallest subnormal of Scalar (`1e-400`, `1e-5000` for double) is read
///   as 0 (or the nearest subnormal), as strtod does; one above the largest finite value is
///   an error.
///
/// Any malformed input throws `ParseError` whose `what()` is `file:line:column: message`;
/// nothing is skipped silently and no input crashes the reader.
///
/// Speed: the input is read in blocks of a few MiB, numbers are parsed in place with
/// `std::from_chars` (no streams, no per-line allocation) and appended to the CSR arrays
/// that become X. With `LibsvmOptions::threads` ≠ 1 a block is cut at line ends into pieces
/// that the threads parse side by side, each straight into X at the offset its colons give,
/// and the next block is read meanwhile (the first block is small, so that the pieces start
/// soon; the blocks double from it); the pieces are joined in order, so X, the labels and any
/// error's position are the serial reader's.
///
/// \code
///   #include <sparsemc/io/libsvm_reader.hpp>
///   namespace io = sparsemc::io;
///   std::ifstream in("train.svm", std::ios::binary);
///   auto train = io::read_libsvm<double>(in, {}, "train.svm");
///   // The test set shares the training dimension and label table:
///   std::ifstream tin("test.svm", std::ios::binary);
///   auto test = io::read_libsvm<double>(tin, {.n_features = train.n_features(),
///                                             .labels = train.encoder()}, "test.svm");
///   auto tiny = io::parse_libsvm<float, std::int64_t>("1 1:0.5 3:-2\n2 2:1\n");
/// \endcode

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../core/huge_pages.hpp"
#include "../core/parallel.hpp"
#include "../data/dataset.hpp"
#include "detail/number.hpp"
#include "parse_error.hpp"

namespace sparsemc::io {

/// How label fields are read.
enum class LabelFormat {
  detect,      ///< multilabel when some label field has a comma; else multiclass (and a
               ///< line without a label is an error)
  multiclass,  ///< exactly one label per line; a comma or a missing label is an error
  multilabel,  ///< comma-separated label sets; a line may have none
};

/// What a label absent from a caller-given label table (`LibsvmOptions::labels`) does.
enum class UnknownLabel {
  /// A `ParseError` at the label (the default: train and test must agree).
  error,
  /// The label joins the table. The table stays sorted, so class indices then refer to the
  /// extended table; compare by label (`encoder().label_of(k)` against
  /// `LinearModel::predict`), which is what evaluating a model on such a test set needs:
  /// a sample whose label the model never saw is simply never predicted right.
  extend,
};

/// Options of the LIBSVM reader (an aggregate: `{.n_features = 180, .zero_based = true}`).
struct LibsvmOptions {
  /// d, the number of features (columns of X). 0: d is the largest index in the file
  /// (+1 when zero-based). Set it to the training d to read test data: an index beyond d
  /// is then an error.
  std::int64_t n_features = 0;
  /// With `n_features`: an index beyond d is skipped (its entry still checked, not stored)
  /// instead of an error — data to predict with a model of d features, which ignores such
  /// features, as LIBLINEAR's predict does.
  bool ignore_features_beyond = false;
  /// Feature indices start at 0 instead of LIBSVM's 1.
  bool zero_based = false;
  /// Multiclass or multilabel label fields, or detection (see `LabelFormat`).
  LabelFormat label_format = LabelFormat::detect;
  /// Label table to map labels to class indices, e.g. the training set's `encoder()`, so
  /// test data uses the training classes and K; classes absent from the file keep their
  /// index. Empty: the table is built from the labels in the file.
  std::optional<LabelEncoder> labels = std::nullopt;
  /// What a label missing from `labels` does (ignored when `labels` is empty).
  UnknownLabel unknown_label = UnknownLabel::error;
  /// Threads that parse: 0 = every core (`available_threads()`), 1 = serial. The result is
  /// the same bit for bit at every count, and so is the error a malformed input throws.
  int threads = 0;

  /// Throws `std::invalid_argument` naming the field when an option is out of range.
  void validate() const {
    if (n_features < 0)
      throw std::invalid_argument("LibsvmOptions::n_features must be >= 0 (0 = largest index in the file), got " +
                                  std::to_string(n_features));
    if (threads < 0)
      throw std::invalid_argument("LibsvmOptions::threads must be >= 0 (0 = every core), got " +
                                  std::to_string(threads));
  }
};

namespace detail {

/// Bytes that end a number token: blanks, the line end and the comment sign.
inline constexpr std::array<bool, 256> separator_table = [] {
  std::array<bool, 256> table{};
  table[static_cast<unsigned char>(' ')] = true;
  table[static_cast<unsigned char>('\t')] = true;
  table[static_cast<unsigned char>('\r')] = true;
  table[static_cast<unsigned char>('\n')] = true;
  table[static_cast<unsigned char>('#')] = true;
  return table;
}();

[[nodiscard]] inline bool is_separator(char c) noexcept { return separator_table[static_cast<unsigned char>(c)]; }
[[nodiscard]] inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

/// End of the token starting at `p` (first separator; every parsed line ends with '\n').
[[nodiscard]] inline const char* token_end(const char* p) noexcept {
  while (!is_separator(*p)) ++p;
  return p;
}

/// A token for an error message: quoted, at most 40 bytes, non-printable bytes as '?'.
[[nodiscard]] inline std::string quote(const char* begin, const char* end) {
  constexpr std::ptrdiff_t max_quoted = 40;
  const bool cut = end - begin > max_quoted;
  std::string out = "'";
  for (const char* p = begin; p != (cut ? begin + max_quoted : end); ++p)
    out += (static_cast<unsigned char>(*p) >= 0x20 && static_cast<unsigned char>(*p) < 0x7f) ? *p : '?';
  out += cut ? "...'" : "'";
  return out;
}

template <StorageIndex Index>
inline constexpr const char* index_bits = sizeof(Index) == 4 ? "32-bit" : "64-bit";

/// The LIBSVM grammar as a push parser: `parse` takes blocks of complete lines (the last
/// byte of a block is '\n'), `finish` builds the Dataset. Positions in errors are relative
/// to the start of the current line, which always lies inside the current block.
template <RealScalar Scalar, StorageIndex Index>
class LibsvmParser {
  static constexpr Index index_max = std::numeric_limits<Index>::max();

 public:
  /// The errors found only at the end of the input (finish()), which a reader of a file in
  /// parts raises once it has heard from every part.
  static constexpr const char* no_samples_message =
      "no samples (the input is empty or holds only blank and comment lines)";
  static constexpr const char* missing_label_message =
      "missing label (nothing marks the input as multilabel, so it is read as multiclass; force "
      "LabelFormat::multilabel for multilabel data)";

  LibsvmParser(const LibsvmParser&) = delete;  // table_ points into options_
  LibsvmParser& operator=(const LibsvmParser&) = delete;
  LibsvmParser(const LibsvmOptions& options, std::string name)
      : options_(options), name_(std::move(name)), base_(options.zero_based ? 0 : 1) {
    options_.validate();
    if (options_.n_features > static_cast<std::int64_t>(index_max))
      throw std::invalid_argument("LibsvmOptions::n_features = " + std::to_string(options_.n_features) +
                                  " does not fit the " + index_bits<Index> + " index type");
    // The largest index accepted: a fixed d, or one that keeps d = column + 1 representable.
    const std::int64_t d_max = options_.n_features > 0 ? options_.n_features : static_cast<std::int64_t>(index_max);
    index_limit_ = d_max - 1 + base_;
    if (options_.labels && options_.labels->size() > 0) table_ = &*options_.labels;
    row_ptr_.push_back(0);
    label_ptr_.push_back(0);
  }

  /// Parses the complete lines in [begin, end); `end[-1]` must be '\n'.
  void parse(const char* begin, const char* end) {
    const char* p = begin;
    while (p < end) {
      ++line_;
      line_start_ = p;
      while (is_blank(*p)) ++p;
      if (*p == '\n') {  // blank line
        ++p;
        continue;
      }
      if (*p == '#') {  // comment line
        p = skip_comment(p, end);
        continue;
      }
      p = parse_labels(p);
      p = parse_features(p, end);
      end_sample();
    }
  }

  /// Samples and entries parsed so far.
  [[nodiscard]] std::int64_t n_samples() const noexcept { return static_cast<std::int64_t>(row_ptr_.size()) - 1; }
  [[nodiscard]] std::int64_t n_entries() const noexcept { return nnz_; }

  /// Where a piece parser writes its entries: `room` slots of this parser's arrays.
  struct EntryWindow {
    Index* indices = nullptr;
    Scalar* values = nullptr;
    Index room = 0;
  };

  /// Forgets every line parsed and points the entries of the next lines at `room` slots of
  /// another parser's arrays, which outlive them (`entry_window`): a piece parser of
  /// `PieceParsers` starts each piece this way, parsing straight into X.
  void restart(const EntryWindow& window) noexcept {
    indices_ = window.indices;
    values_ = window.values;
    capacity_ = window.room;
    line_ = 0;
    saw_multilabel_sign_ = false;
    missing_label_line_ = missing_label_column_ = 0;
    row_ptr_.resize(1);
    label_ptr_.resize(1);
    labels_.clear();
    unknown_.clear();
    nnz_ = 0;
    max_column_ = -1;
  }

  /// Frees the sample and label arrays (a piece parser whose piece has been appended and whose
  /// input has ended).
  void free_arrays() {
    restart({});
    row_ptr_.shrink_to_fit();
    label_ptr_.shrink_to_fit();
    labels_.shrink_to_fit();
    unknown_.shrink_to_fit();
  }

  /// Makes room for `entries` more entries after those parsed (the caller has checked that
  /// they fit Index), growing the arrays geometrically so that round after round stays linear.
  void make_room(std::int64_t entries) {
    const std::int64_t wanted = nnz_ + entries;
    if (wanted <= capacity_) return;
    const std::int64_t grown = std::min<std::int64_t>(index_max, capacity_ + capacity_ / 2);
    set_capacity(static_cast<Index>(std::max(wanted, grown)));
  }

  /// `room` slots from entry `first` on (inside the room made).
  [[nodiscard]] EntryWindow entry_window(std::int64_t first, std::int64_t room) noexcept {
    return {indices_ + first, values_ + first, static_cast<Index>(room)};
  }

  /// Appends what `pieces` parsed, in order: the first piece's lines follow this parser's,
  /// each next piece's the previous one's. Piece t parsed its entries into the window at
  /// entry `starts[t]`; a window the piece did not fill (comment lines, qid) leaves a gap
  /// that the later pieces' entries move down over. Line numbers (of the deferred
  /// missing-label error) move by the lines before the piece; the sample and label arrays are
  /// sized once and the pieces' copied into them on `team` threads, each piece's freed once
  /// copied if `consume`. The caller has checked that the samples fit Index.
  void append(std::span<const std::unique_ptr<LibsvmParser>> pieces, std::span<const std::int64_t> starts, int team,
              bool consume = false) {
    std::int64_t nnz = nnz_;
    std::size_t rows = row_ptr_.size() - 1;
    std::size_t labels = labels_.size();
    piece_offsets_.clear();
    for (std::size_t t = 0; t < pieces.size(); ++t) {
      const auto& piece = pieces[t];
      if (starts[t] != nnz) {  // in order, so that a move never overwrites entries yet to move
        std::memmove(indices_ + nnz, indices_ + starts[t], static_cast<std::size_t>(piece->nnz_) * sizeof(Index));
        std::memmove(values_ + nnz, values_ + starts[t], static_cast<std::size_t>(piece->nnz_) * sizeof(Scalar));
      }
      piece_offsets_.push_back({static_cast<Index>(nnz), rows, labels});
      nnz += piece->nnz_;
      rows += piece->row_ptr_.size() - 1;
      labels += piece->labels_.size();
      if (missing_label_line_ == 0 && piece->missing_label_line_ > 0) {
        missing_label_line_ = line_ + piece->missing_label_line_;
        missing_label_column_ = piece->missing_label_column_;
      }
      line_ += piece->line_;
      saw_multilabel_sign_ |= piece->saw_multilabel_sign_;
      max_column_ = std::max(max_column_, piece->max_column_);
      unknown_.insert(unknown_.end(), piece->unknown_.begin(), piece->unknown_.end());
    }
    row_ptr_.resize(rows + 1);
    label_ptr_.resize(rows + 1);
    labels_.resize(labels);
    sparsemc::detail::parallel_tasks(team, pieces.size(),
                                     [&](std::size_t t) {
                                       copy_piece(*pieces[t], piece_offsets_[t]);
                                       if (consume) pieces[t]->free_arrays();
                                     });
    nnz_ = static_cast<Index>(nnz);
  }

  /// Sizes the arrays for an input of `total_bytes`, extrapolating from the `parsed_bytes`
  /// read so far (with 10% slack), so that they are not regrown and copied while parsing.
  void reserve_for(std::size_t total_bytes, std::size_t parsed_bytes) {
    if (parsed_bytes == 0 || total_bytes <= parsed_bytes) return;
    const double scale = 1.1 * static_cast<double>(total_bytes) / static_cast<double>(parsed_bytes);
    auto grow = [scale](auto& v) { v.reserve(static_cast<std::size_t>(scale * static_cast<double>(v.size())) + 16); };
    const double wanted = scale * static_cast<double>(nnz_) + 16;
    if (wanted > static_cast<double>(capacity_))
      set_capacity(static_cast<Index>(std::min(wanted, static_cast<double>(index_max))));
    grow(row_ptr_);
    grow(label_ptr_);
    grow(labels_);
  }

  /// Builds the Dataset once the input is exhausted. `tail` is the length of a last line
  /// that had no '\n' of its own (0 otherwise); it places the end-of-input position.
  [[nodiscard]] Dataset<Scalar, Index> finish(std::size_t tail) {
    const std::size_t n = row_ptr_.size() - 1;
    // An empty dataset is an error at the end of the input (line 1, column 1 when empty).
    if (n == 0) {
      const std::int64_t line = tail > 0 ? line_ : line_ + 1;
      throw ParseError(name_, line, static_cast<std::int64_t>(tail) + 1, no_samples_message);
    }
    // The label format is settled only now: a comma on the last line can make a file
    // multilabel, and a label-less line is an error only if nothing did.
    const bool multilabel = options_.label_format == LabelFormat::multilabel ||
                            (options_.label_format == LabelFormat::detect && saw_multilabel_sign_);
    if (!multilabel && missing_label_line_ > 0)
      throw ParseError(name_, missing_label_line_, missing_label_column_, missing_label_message);

    // The label table: the caller's (possibly extended), or the labels of the file.
    LabelEncoder encoder;
    if (table_ != nullptr) {
      encoder = *table_;
      if (!unknown_.empty()) encoder.fit(unknown_);
    } else {
      encoder = LabelEncoder(distinct_labels());
    }
    const Index d = options_.n_features > 0 ? static_cast<Index>(options_.n_features) : max_column_ + 1;
    return finish_part(encoder, d, multilabel);
  }

  /// What the lines parsed say about the whole input, for a reader that parses a file in
  /// parts, each apart from the lines before it (sparsemc/mpi/read.hpp): its lines, whether a
  /// label list marked the input multilabel, its first line without a label (0: none; with
  /// its column), and the d its indices need.
  struct PartSummary {
    std::int64_t lines = 0;
    bool multilabel_sign = false;
    std::int64_t missing_label_line = 0;
    std::int64_t missing_label_column = 0;
    std::int64_t n_features = 0;
  };
  [[nodiscard]] PartSummary summary() const noexcept {
    return {line_, saw_multilabel_sign_, missing_label_line_, missing_label_column_,
            static_cast<std::int64_t>(max_column_) + 1};
  }

  /// The Dataset of the lines parsed (possibly none), with the whole input's label table
  /// (holding every label read here), d and label format — settled by the caller over every
  /// part; finish() is the one-part case, with its end-of-input checks.
  [[nodiscard]] Dataset<Scalar, Index> finish_part(LabelEncoder encoder, Index d, bool multilabel) {
    const std::size_t n = row_ptr_.size() - 1;
    const ClassIndex K = encoder.size();
    const std::vector<ClassIndex> classes = class_indices(encoder);
    // Class sets: one class per sample, or the label lists (sorted, duplicates merged).
    LabelSets y;
    if (multilabel) {
      y = LabelSets(K);
      for (std::size_t i = 0; i < n; ++i) {
        const auto first = static_cast<std::size_t>(label_ptr_[i]);
        y.push_back(std::span<const ClassIndex>(classes).subspan(first, static_cast<std::size_t>(label_ptr_[i + 1]) - first));
      }
    } else {
      y = LabelSets::multiclass(classes, K);
    }
    // X is built in place as the constructor's argument (Eigen 3.4 matrices do not move).
    return Dataset<Scalar, Index>(take_matrix(static_cast<Index>(n), d), std::move(y), std::move(encoder));
  }

  /// The labels of the file, each once. Labels spanning a moderate range (the usual case:
  /// 0..9, 1..105, ±1) are collected through a table indexed by label − min, O(n);
  /// otherwise by sorting a copy, O(n log n).
  [[nodiscard]] std::vector<Label> distinct_labels() const {
    if (labels_.empty()) return {};
    const auto [lo, hi] = std::minmax_element(labels_.begin(), labels_.end());
    const auto range = static_cast<std::uint64_t>(*hi) - static_cast<std::uint64_t>(*lo);
    std::vector<Label> out;
    if (range < dense_label_range) {
      std::vector<unsigned char> seen(range + 1, 0);
      for (Label l : labels_) seen[static_cast<std::uint64_t>(l) - static_cast<std::uint64_t>(*lo)] = 1;
      for (std::uint64_t k = 0; k <= range; ++k)
        if (seen[k]) out.push_back(static_cast<Label>(static_cast<std::uint64_t>(*lo) + k));
    } else {
      out = labels_;
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return out;
  }

 private:
  /// The class index of every label read (a lookup table over a moderate label range, else
  /// a binary search in the encoder).
  [[nodiscard]] std::vector<ClassIndex> class_indices(const LabelEncoder& encoder) const {
    std::vector<ClassIndex> classes(labels_.size());
    const auto& table = encoder.labels();
    const auto range = table.empty() ? 0 : static_cast<std::uint64_t>(table.back()) - static_cast<std::uint64_t>(table.front());
    if (!table.empty() && range < dense_label_range) {
      const auto lo = static_cast<std::uint64_t>(table.front());
      std::vector<ClassIndex> index_of(range + 1, -1);
      for (std::size_t k = 0; k < table.size(); ++k)
        index_of[static_cast<std::uint64_t>(table[k]) - lo] = static_cast<ClassIndex>(k);
      for (std::size_t k = 0; k < labels_.size(); ++k) classes[k] = index_of[static_cast<std::uint64_t>(labels_[k]) - lo];
    } else {
      for (std::size_t k = 0; k < labels_.size(); ++k) classes[k] = encoder.index_of(labels_[k]);
    }
    return classes;
  }

  /// Label ranges up to this size use lookup tables (a few MiB at most).
  static constexpr std::uint64_t dense_label_range = std::uint64_t{1} << 20;

  /// X from the parsed arrays: the entries move into it without a copy (only a capacity
  /// well above nnz is trimmed, which copies once).
  CsrMatrix<Scalar, Index> take_matrix(Index n, Index d) {
    entries_.resize(static_cast<Eigen::Index>(nnz_));
    if (capacity_ > nnz_ + nnz_ / 4 + 4096) entries_.squeeze();
    CsrMatrix<Scalar, Index> X(n, d);
    X.data().swap(entries_);
    std::copy(row_ptr_.begin(), row_ptr_.end(), X.outerIndexPtr());
    capacity_ = nnz_ = 0;
    return X;
  }

  [[noreturn]] void fail(const char* at, const std::string& message) const {
    throw ParseError(name_, line_, (at - line_start_) + 1, message);
  }

  static const char* skip_comment(const char* p, const char* end) noexcept {
    return static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p))) + 1;
  }

  // ---- labels ---------------------------------------------------------------------------

  /// Reads the label field at `p` (first non-blank byte of a sample line); returns the
  /// position after it. A first token with ':' is a feature: the line has no label.
  const char* parse_labels(const char* p) {
    const char* end = p;
    bool has_colon = false;
    while (!is_separator(*end)) has_colon |= (*end++ == ':');
    if (has_colon) {
      if (options_.label_format == LabelFormat::multiclass) fail(p, "missing label before the first feature");
      // An empty label set: fine in a multilabel file, an error in a multiclass one. Whether the
      // line starts with a blank does not matter (one deleted byte must not turn a multiclass
      // file into a multilabel one); only a label list with a comma marks a file multilabel.
      if (missing_label_line_ == 0) {
        missing_label_line_ = line_;
        missing_label_column_ = (p - line_start_) + 1;
      }
      return p;
    }
    const char* first = p;
    for (;;) {
      const char* comma = static_cast<const char*>(std::memchr(first, ',', static_cast<std::size_t>(end - first)));
      const char* stop = comma ? comma : end;
      if (stop == first) fail(first, "empty label in a label list");
      add_label(first, parse_label(first, stop));
      if (!comma) break;
      if (options_.label_format == LabelFormat::multiclass)
        fail(comma, "',' in a label: a multiclass line has one label (LabelFormat::multilabel reads label lists)");
      saw_multilabel_sign_ = true;
      first = comma + 1;
    }
    return end;
  }

  /// One label in [b, e) (no commas or separators inside).
  Label parse_label(const char* b, const char* e) const {
    const char* s = (*b == '+' && e - b > 1 && b[1] != '+' && b[1] != '-') ? b + 1 : b;
    Label label = 0;
    const auto [r, ec] = std::from_chars(s, e, label);
    if (ec == std::errc{} && r == e) return label;
    // An integral real such as 1.0 or 2e0?
    double x = 0;
    const auto [rx, ecx] = std::from_chars(s, e, x);
    if (ecx == std::errc{} && rx == e && std::isfinite(x) && x == std::trunc(x)) {
      constexpr double two_to_63 = 9223372036854775808.0;
      if (x >= -two_to_63 && x < two_to_63) return static_cast<Label>(x);
      fail(b, "label " + quote(b, e) + " overflows the 64-bit label type");
    }
    if (ec == std::errc::result_out_of_range && r == e)
      fail(b, "label " + quote(b, e) + " overflows the 64-bit label type");
    fail(b, "label " + quote(b, e) + " is not an integer");
  }

  void add_label(const char* at, Label label) {
    if (table_ != nullptr && !table_->contains(label)) {
      if (options_.unknown_label == UnknownLabel::error)
        fail(at, "label " + std::to_string(label) + " is not in the given label table (" +
                     std::to_string(table_->size()) + " labels; UnknownLabel::extend accepts it)");
      unknown_.push_back(label);
    }
    labels_.push_back(label);
  }

  // ---- features -------------------------------------------------------------------------

  /// Reads `idx:value` tokens up to the end of the line; returns the start of the next line.
  /// This is the hot loop: per entry one integer and one real `from_chars`, two comparisons
  /// that check the index (increasing, in range) and one store; everything unusual leaves
  /// through the [[unlikely]] branches, which only diagnose.
  const char* parse_features(const char* p, const char* end) {
    std::int64_t previous = base_ - 1;  // last index read on this line (as written)
    bool first = true;                  // qid may only come first
    for (;;) {
      while (is_blank(*p)) ++p;
      if (*p == '\n') return p + 1;
      if (*p == '#') return skip_comment(p, end);
      // The index is read as int64 whatever Index is, so that overflow of Index is caught
      // by the range test below rather than by a wrap-around.
      std::int64_t index = 0;
      const auto [colon, ec] = std::from_chars(p, end, index);
      if (ec != std::errc{} || *colon != ':') [[unlikely]] {
        if (first && p[0] == 'q' && p[1] == 'i' && p[2] == 'd' && p[3] == ':') {
          p = parse_qid(p);
          first = false;
          continue;
        }
        bad_index_token(p, colon, ec);
      }
      // index > previous ≥ base − 1 covers "≥ base" as well as "strictly increasing".
      if (index <= previous || index > index_limit_) [[unlikely]] {
        if (index <= previous || !skip_beyond_limit_) bad_index(p, index, previous);
        previous = index;  // beyond a fixed d, to be ignored: checked, not stored
        Scalar ignored;
        p = parse_value(colon + 1, end, ignored);
        first = false;
        continue;
      }
      previous = index;
      Scalar value;  // read in Scalar directly: a float is rounded once, from the text
      p = parse_value(colon + 1, end, value);
      if (nnz_ == capacity_) [[unlikely]]
        grow_entries(p);
      indices_[nnz_] = static_cast<Index>(index - base_);
      values_[nnz_] = value;
      ++nnz_;
      first = false;
    }
  }

  /// `qid:N` (SVMlight): must be an integer, otherwise ignored.
  const char* parse_qid(const char* p) const {
    const char* v = p + 4;
    const char* e = token_end(v);
    std::int64_t qid = 0;
    const auto [r, ec] = std::from_chars(v, e, qid);
    if (v == e) fail(v, "missing value after 'qid:'");
    if (ec != std::errc{} || r != e) fail(v, "qid " + quote(v, e) + " is not an integer");
    return e;
  }

  /// Diagnoses a token at `p` that does not start with `integer ':'`; `stop` and `ec` are
  /// what `from_chars` made of it. The checks run from the most specific message to the
  /// most general one.
  [[noreturn]] void bad_index_token(const char* p, const char* stop, std::errc ec) const {
    const char* e = token_end(p);
    const char* colon = static_cast<const char*>(std::memchr(p, ':', static_cast<std::size_t>(e - p)));
    if (colon == p) fail(p, "missing feature index before ':'");
    if (ec == std::errc::result_out_of_range && stop == colon)
      fail(p, "feature index " + quote(p, colon) + " overflows the " + index_bits<Index> + " index type");
    if (colon == nullptr) {
      if (ec == std::errc{} && stop == e) fail(stop, "missing ':' after feature index " + quote(p, e));
      fail(p, "expected index:value, got " + quote(p, e));
    }
    fail(p, "feature index " + quote(p, colon) + " is not an integer");
  }

  /// Diagnoses an index that is in the wrong place: below the base, not increasing, beyond
  /// a fixed d or beyond what `Index` can hold.
  [[noreturn]] void bad_index(const char* p, std::int64_t index, std::int64_t previous) const {
    if (index < base_)
      fail(p, "feature index " + std::to_string(index) + (base_ == 1 ? " is < 1 (indices are 1-based)" : " is < 0"));
    if (index <= previous)
      fail(p, "feature indices must be strictly increasing: " + std::to_string(index) + " after " +
                  std::to_string(previous));
    if (options_.n_features > 0)
      fail(p, "feature index " + std::to_string(index) + " is beyond the number of features " +
                  std::to_string(options_.n_features) + (base_ == 1 ? "" : " (zero-based)"));
    fail(p, "feature index " + std::to_string(index) + " overflows the " + index_bits<Index> + " index type");
  }

  /// Parses the value at `v`; returns the position after it. The value must end at a
  /// separator (so `1.5x` or `2:3` are errors, not 1.5 and 2) and be finite.
  const char* parse_value(const char* v, const char* end, Scalar& value) const {
    // from_chars accepts '-' but not '+'; skip one '+' unless another sign follows.
    const char* s = (*v == '+' && v[1] != '+' && v[1] != '-') ? v + 1 : v;
    const auto [r, ec] = std::from_chars(s, end, value);
    if (ec == std::errc{} && is_separator(*r) && std::isfinite(value)) [[likely]]
      return r;
    return value_fallback(v, s, r, ec, value);
  }

  /// The rare cases of `parse_value`: errors, and magnitudes outside the normal range of
  /// Scalar, read wider and rounded: tiny ones become the nearest subnormal or zero (as
  /// strtod does), huge ones are an error.
  const char* value_fallback(const char* v, const char* s, const char* r, std::errc ec, Scalar& value) const {
    const char* e = token_end(v);
    if (e == v) fail(v, "missing value after ':'");
    if (ec == std::errc::invalid_argument || r != e) fail(v, "value " + quote(v, e) + " is not a number");
    if (ec == std::errc::result_out_of_range) {
      if (round_out_of_range(s, e, value)) return e;  // underflow: 0 or the nearest subnormal
      fail(v, "value " + quote(v, e) + " overflows " + (sizeof(Scalar) == 4 ? "float" : "double"));
    }
    fail(v, "value " + quote(v, e) + " is NaN or infinite");
  }

  /// Doubles the entry arrays (at `at`: where the error goes if Index cannot count further).
  /// A window (`restart`) holds every entry of its piece, so only a parser's own arrays grow.
  void grow_entries(const char* at) {
    assert(indices_ == entries_.indexPtr());
    if (capacity_ == index_max)
      fail(at, std::string("more nonzeros than the ") + index_bits<Index> + " index type can count");
    set_capacity(capacity_ > index_max / 2 ? index_max : std::max<Index>(2 * capacity_, 4096));
  }

  /// Reallocates the entry arrays to `capacity` (>= nnz_), keeping the entries; the part not
  /// yet written is advised to huge pages.
  void set_capacity(Index capacity) {
    entries_.resize(static_cast<Eigen::Index>(capacity));
    if (capacity > capacity_) {
      const auto kept = static_cast<std::size_t>(capacity_), room = static_cast<std::size_t>(capacity - capacity_);
      sparsemc::detail::advise_huge_pages(entries_.valuePtr() + kept, room * sizeof(Scalar));
      sparsemc::detail::advise_huge_pages(entries_.indexPtr() + kept, room * sizeof(Index));
    }
    capacity_ = capacity;
    indices_ = entries_.indexPtr();
    values_ = entries_.valuePtr();
  }

  // ---- pieces ---------------------------------------------------------------------------

  /// Where a piece's arrays start in this parser's.
  struct PieceOffsets {
    Index entries;
    std::size_t rows;
    std::size_t labels;
  };

  /// Copies `piece`'s sample and label arrays to `at` (room made by `append`), shifting its
  /// offsets; its entries are in place.
  void copy_piece(const LibsvmParser& piece, const PieceOffsets& at) {
    const auto label_shift = static_cast<std::int64_t>(at.labels);
    for (std::size_t i = 1; i < piece.row_ptr_.size(); ++i) {
      row_ptr_[at.rows + i] = piece.row_ptr_[i] + at.entries;
      label_ptr_[at.rows + i] = piece.label_ptr_[i] + label_shift;
    }
    std::copy(piece.labels_.begin(), piece.labels_.end(), labels_.begin() + static_cast<std::ptrdiff_t>(at.labels));
  }

  // ---- samples --------------------------------------------------------------------------

  /// Closes the current line's sample: its end in the entry arrays and in the label arrays.
  void end_sample() {
    // n itself is stored as an Index (rows of X).
    if (row_ptr_.size() > static_cast<std::size_t>(index_max))
      fail(line_start_, std::string("more samples than the ") + index_bits<Index> + " index type can count");
    if (row_ptr_.back() != nnz_)  // the row's last index is its largest
      max_column_ = std::max(max_column_, indices_[nnz_ - 1]);
    row_ptr_.push_back(nnz_);
    label_ptr_.push_back(static_cast<std::int64_t>(labels_.size()));
  }

  // Configuration.
  LibsvmOptions options_;
  bool skip_beyond_limit_ = options_.ignore_features_beyond && options_.n_features > 0;
  std::string name_;
  std::int64_t base_;         // 1 (LIBSVM) or 0
  std::int64_t index_limit_;  // largest admissible index as written
  const LabelEncoder* table_ = nullptr;

  // Position and what the lines so far said about the label format.
  std::int64_t line_ = 0;
  const char* line_start_ = nullptr;
  bool saw_multilabel_sign_ = false;
  std::int64_t missing_label_line_ = 0;
  std::int64_t missing_label_column_ = 0;

  // X in CSR form: row_ptr_ (n+1 offsets) and the entries.
  std::vector<Index> row_ptr_;
  // X's entries (column indices and values), in Eigen's own storage so that they become X
  // without a copy; entries_.size() is the capacity, nnz_ the entries in use. The lines
  // write them through indices_ and values_: into entries_, or a piece parser into its
  // window of the main parser's (capacity_ its room).
  Eigen::internal::CompressedStorage<Scalar, Index> entries_;
  Index* indices_ = nullptr;
  Scalar* values_ = nullptr;
  Index nnz_ = 0;
  Index capacity_ = 0;
  Index max_column_ = -1;
  // Labels as read, CSR-style (sample i: labels_[label_ptr_[i] .. label_ptr_[i+1])), and
  // those missing from a caller's table under UnknownLabel::extend.
  std::vector<std::int64_t> label_ptr_;
  std::vector<Label> labels_;
  std::vector<Label> unknown_;
  // Where `append` puts each piece (kept between blocks).
  std::vector<PieceOffsets> piece_offsets_;
};

/// Pieces of input below this size are not worth a thread of their own.
inline constexpr std::size_t min_piece_bytes = std::size_t{64} << 10;

/// Bytes of one piece, and pieces per thread and round. Many small pieces balance the
/// threads (one of them also reads the next block), and long rounds make the joins rare:
/// a round of a thread is the serial reader's block.
inline constexpr std::size_t piece_bytes = std::size_t{1} << 20;
inline constexpr std::size_t pieces_per_thread = 8;
/// At most this many pieces per round (a round's bytes are held twice, see `read_blocks`).
inline constexpr std::size_t max_pieces = 64;

/// Parses complete lines on several threads into a main parser, with the result and the
/// errors of the main parser parsing them alone. Each round cuts its bytes at line ends into
/// up to `pieces_per_thread` pieces per thread, counts each piece's colons (a bound on its
/// entries) to give it a window of the main parser's entry arrays, parses every piece with a
/// parser of its own into its window, and appends the pieces' samples to the main parser in
/// order (`LibsvmParser::append`, which closes the gaps a window's comments or qid left). So
/// X's entries are written once, by the thread that parses them: no piece holds a copy. A piece
/// whose parser threw, or whose samples would overflow Index, is parsed again, with every
/// piece after it, by the main parser: it knows the lines before the piece, so the error it
/// throws has the serial reader's line and column.
template <RealScalar Scalar, StorageIndex Index>
class PieceParsers {
  using Parser = LibsvmParser<Scalar, Index>;

 public:
  PieceParsers(const LibsvmOptions& options, const std::string& name, int team)
      : team_(std::max(team, 1)),
        cuts_(std::min(pieces_per_thread * static_cast<std::size_t>(team_), max_pieces) + 1),
        starts_(cuts_.size()),
        failed_(cuts_.size() - 1) {
    if (team_ > 1)
      for (std::size_t t = 0; t < failed_.size(); ++t) parsers_.push_back(std::make_unique<Parser>(options, name));
  }

  /// Bytes of one round: a block for the reader.
  [[nodiscard]] std::size_t round_bytes() const noexcept { return failed_.size() * piece_bytes; }

  /// Parses the complete lines in [begin, end) (`end[-1]` is '\n') into `main`, running
  /// `beside()` (reading the next block, say) on a thread of the first round. Before the last
  /// round's join, if all its pieces parsed, `release()` may free [begin, end) (no line of it
  /// is read again) and returns whether the input ends there; if it does, each piece's arrays
  /// are freed once copied into `main`. So the join of a file's last block holds X and what
  /// is left of the pieces, not also the text and every piece.
  template <class Beside = void (*)(), class Release = bool (*)()>
  void parse(Parser& main, const char* begin, const char* end, Beside&& beside = [] {},
             Release&& release = [] { return false; }) {
    const std::size_t round_bytes = this->round_bytes();
    for (bool first = true; first || begin < end; first = false) {
      const char* stop = end;
      if (static_cast<std::size_t>(end - begin) > round_bytes) stop = line_end(begin + round_bytes, end);
      parse_round(main, begin, stop, first, stop == end, beside, release);
      begin = stop;
    }
  }

 private:
  /// The start of the line after the one holding `p` (`end[-1]` is '\n').
  static const char* line_end(const char* p, const char* end) noexcept {
    return static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p))) + 1;
  }

  /// One round: `beside()` (in the first round) and the pieces as tasks of one parallel loop,
  /// then the join, before which the last round may `release()` its text.
  template <class Beside, class Release>
  void parse_round(Parser& main, const char* begin, const char* end, bool first, bool last, Beside& beside,
                   Release& release) {
    const auto bytes = static_cast<std::size_t>(end - begin);
    const std::size_t count = std::min(bytes / min_piece_bytes, parsers_.size());
    if (count <= 1) {
      if (first) beside();
      if (begin < end) main.parse(begin, end);
      return;
    }
    // Cut at line ends; a line longer than a piece leaves the next piece empty.
    cuts_[0] = begin;
    for (std::size_t t = 1; t < count; ++t)
      cuts_[t] = std::max(cuts_[t - 1], line_end(begin + t * bytes / count - 1, end));
    cuts_[count] = end;
    // A piece has at most as many entries as colons: that many slots of X are its window.
    sparsemc::detail::parallel_tasks(team_, count, [&](std::size_t t) {
      starts_[t + 1] = std::count(cuts_[t], cuts_[t + 1], ':');
    });
    starts_[0] = main.n_entries();
    for (std::size_t t = 0; t < count; ++t) starts_[t + 1] += starts_[t];
    constexpr auto index_max = static_cast<std::int64_t>(std::numeric_limits<Index>::max());
    if (starts_[count] > index_max) {  // X may still fit Index: `main` says where it stops
      if (first) beside();
      main.parse(begin, end);
      return;
    }
    main.make_room(starts_[count] - starts_[0]);
    // Task 0 runs beside(); task t ≥ 1 parses piece t − 1 into its window.
    sparsemc::detail::parallel_tasks(team_, count + 1, [&](std::size_t task) {
      if (task == 0) {
        if (first) beside();
        return;
      }
      const std::size_t t = task - 1;
      parsers_[t]->restart(main.entry_window(starts_[t], starts_[t + 1] - starts_[t]));
      try {
        parsers_[t]->parse(cuts_[t], cuts_[t + 1]);
        failed_[t] = 0;
      } catch (const ParseError&) {
        failed_[t] = 1;  // parsed again below by `main`, which places the error
      }
    });
    // The leading pieces that parsed and fit Index go in at once; the rest, serially.
    std::size_t good = 0;
    for (std::int64_t rows = main.n_samples(); good < count && failed_[good] == 0; ++good) {
      rows += parsers_[good]->n_samples();
      if (rows > index_max) break;
    }
    const bool input_ends = last && good == count && release();
    main.append(std::span<const std::unique_ptr<Parser>>(parsers_).first(good), starts_, team_, input_ends);
    for (std::size_t t = good; t < count; ++t) main.parse(cuts_[t], cuts_[t + 1]);
  }

  int team_;
  std::vector<std::unique_ptr<Parser>> parsers_;
  std::vector<const char*> cuts_;
  std::vector<std::int64_t> starts_;  // piece t's window: entries [starts_[t], starts_[t + 1]) of `main`
  std::vector<unsigned char> failed_;
};

/// Default block size of the chunked readers (bytes).
inline constexpr std::size_t default_block_size = std::size_t{4} << 20;

/// First block for an input of unknown size (a stream, decompressed data); it doubles up to
/// the full block size while reads fill it, so a small input does not pay for a full block.
inline constexpr std::size_t first_block_size = std::size_t{64} << 10;

/// First block of a threaded read of known size. Nothing parses until it is in, so it is a
/// quarter of a two-thread round (the smallest block that still holds a huge page); the blocks
/// then double up to a round while the next is read beside the pieces.
inline constexpr std::size_t threaded_first_block_size = std::size_t{4} << 20;

/// Sizes a text block to `size` bytes. Storage that must grow is allocated afresh and advised
/// before it is written: the bytes it held are not kept.
inline void resize_block(std::vector<char>& block, std::size_t size) {
  if (size > block.capacity()) {
    std::vector<char>().swap(block);
    block.reserve(size);
    sparsemc::detail::advise_huge_pages(block.data(), block.capacity());
  }
  block.resize(size);
}

/// Drives a parser over a byte source with `std::size_t read(char* dst, std::size_t cap)`
/// (returns 0 at the end) and `std::optional<std::size_t> size()` (the total, when known,
/// to size the arrays after the first block): reads big blocks, parses the complete lines of
/// each and carries the partial last line over; a line longer than the block grows the
/// buffer. Two buffers take turns: the next block is read while this one's lines are parsed.
template <RealScalar Scalar, StorageIndex Index, class Source>
Dataset<Scalar, Index> read_blocks(Source& source, const LibsvmOptions& options, std::string name,
                                   std::size_t block_size = default_block_size) {
  LibsvmParser<Scalar, Index> parser(options, name);
  // With several threads a block is a round of pieces (see PieceParsers).
  const int team = resolve_threads(options.threads);
  PieceParsers<Scalar, Index> pieces(options, name, team);
  if (team > 1) block_size = std::max(block_size, pieces.round_bytes());
  const std::optional<std::size_t> total = source.size();
  // A file smaller than the block is read into a buffer of its own size: zero-filling an unused
  // 4 MB block costs ~1000 page faults, more time than reading and solving a small data set.
  // An input of unknown size starts with first_block_size and grows as it proves larger; so
  // does a threaded read, from threaded_first_block_size.
  const std::size_t first = team > 1 ? std::min(block_size, threaded_first_block_size) : block_size;
  const std::size_t block = std::min(first, total ? *total + 1 : first_block_size);
  std::vector<char> buffer, next;  // the two take turns
  sparsemc::detail::assign_advised(buffer, std::max<std::size_t>(block, 1) + 1, '\0');  // +1: room for a final '\n'
  std::size_t room = buffer.size() - 1;
  std::size_t got = source.read(buffer.data(), room);
  std::size_t read_bytes = got;  // from the source so far
  std::size_t filled = got;
  std::size_t scanned = 0;  // buffer[0, scanned) holds no '\n'
  bool first_block = true;
  // buffer[0, filled) holds the bytes not parsed yet; the last `got` of them were just read.
  for (;;) {
    if (got == 0) {
      if (filled > 0) {  // last line without '\n'
        buffer[filled] = '\n';
        parser.parse(buffer.data(), buffer.data() + filled + 1);
      }
      return parser.finish(filled);
    }
    const auto last = std::string_view(buffer.data() + scanned, filled - scanned).rfind('\n');
    if (last == std::string_view::npos) {  // still inside one line: read on, growing if full
      if (filled == buffer.size() - 1) buffer.resize(2 * buffer.size());
      scanned = filled;
      room = buffer.size() - 1 - filled;
      got = source.read(buffer.data() + filled, room);
      read_bytes += got;
      filled += got;
      continue;
    }
    // While the complete lines are parsed, the next buffer is sized (a read that filled its room
    // asks for a larger next block), takes the incomplete rest at its front and is filled. An
    // input of known size never gets a block larger than the carry, the bytes it has left and
    // room to see the end: a block is zero-filled when sized, so a doubled block past the end
    // of a 7 MB file cost 4 MiB of resident memory at the read's peak.
    const std::size_t used = scanned + last + 1;
    const std::size_t carry = filled - used;
    const bool grow = got == room && buffer.size() - 1 < block_size;
    std::size_t next_size = grow ? std::min(2 * (buffer.size() - 1), block_size) + 1 : buffer.size();
    if (total) next_size = std::min(next_size, carry + (*total - std::min(read_bytes, *total)) + 2);
    const auto read_next = [&] {
      resize_block(next, next_size);
      std::memcpy(next.data(), buffer.data() + used, carry);
      room = next.size() - 1 - carry;
      got = source.read(next.data() + carry, room);
    };
    // Once the pieces of the input's last block have parsed, its bytes are freed before the join.
    pieces.parse(
        parser, buffer.data(), buffer.data() + used, read_next,
        [&] {
          if (!total || read_bytes + got < *total) return false;
          std::vector<char>().swap(buffer);
          return true;
        });
    if (first_block && total) parser.reserve_for(*total, used);
    first_block = false;
    buffer.swap(next);
    read_bytes += got;
    filled = carry + got;
    scanned = carry;
  }
}

/// A `std::istream` as a byte source (unknown size; `read` fills whole blocks).
class StreamSource {
 public:
  explicit StreamSource(std::istream& in, const std::string& name) : in_(in), name_(name) {}
  std::optional<std::size_t> size() const { return std::nullopt; }
  std::size_t read(char* dst, std::size_t capacity) {
    in_.read(dst, static_cast<std::streamsize>(capacity));
    if (in_.bad()) throw std::runtime_error(name_ + ": read error");
    return static_cast<std::size_t>(in_.gcount());
  }

 private:
  std::istream& in_;
  const std::string& name_;
};

/// A plain file as a byte source (C stdio: no locale or stream overhead).
class FileSource {
 public:
  explicit FileSource(const std::filesystem::path& path) : name_(path.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(name_ + ": cannot read: is a directory");
    file_ = std::fopen(name_.c_str(), "rb");
    if (file_ == nullptr)
      throw std::runtime_error(name_ + ": cannot open (" + std::generic_category().message(errno) + ")");
  }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  ~FileSource() { std::fclose(file_); }

  std::optional<std::size_t> size() const {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(name_, ec);
    return ec ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(bytes));
  }
  std::size_t read(char* dst, std::size_t capacity) {
    const std::size_t got = std::fread(dst, 1, capacity, file_);
    if (got < capacity && std::ferror(file_))
      throw std::runtime_error(name_ + ": read error (" + std::generic_category().message(errno) + ")");
    return got;
  }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
};

}  // namespace detail

/// Reads LIBSVM text from a stream (opened in binary mode, or any stream of the bytes).
/// `name` is the file name used in error messages.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm(std::istream& in, const LibsvmOptions& options = {},
                                                 const std::string& name = "<stream>") {
  detail::StreamSource source(in, name);
  return detail::read_blocks<Scalar, Index>(source, options, name);
}

namespace detail {

/// Parses `text` into `parser` in place on `team` threads (only an unterminated last line is
/// copied); returns that line's length (0 when the text ends with '\n'), for finish().
template <RealScalar Scalar, StorageIndex Index>
std::size_t parse_text(LibsvmParser<Scalar, Index>& parser, std::string_view text, const LibsvmOptions& options,
                       const std::string& name) {
  PieceParsers<Scalar, Index> pieces(options, name, resolve_threads(options.threads));
  const auto last = text.rfind('\n');
  const std::size_t complete = last == std::string_view::npos ? 0 : last + 1;
  // The first MiB (up to a line end) gives the estimate that sizes the arrays for the rest.
  const auto head_end = complete > (std::size_t{1} << 20) ? text.find('\n', std::size_t{1} << 20) + 1 : complete;
  pieces.parse(parser, text.data(), text.data() + head_end);
  parser.reserve_for(complete, head_end);
  pieces.parse(parser, text.data() + head_end, text.data() + complete);
  const std::size_t tail = text.size() - complete;
  if (tail > 0) {
    std::string line(text.substr(complete));
    line += '\n';
    parser.parse(line.data(), line.data() + line.size());
  }
  return tail;
}

}  // namespace detail

/// Parses LIBSVM text held in memory, in place (only an unterminated last line is copied).
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> parse_libsvm(std::string_view text, const LibsvmOptions& options = {},
                                                  const std::string& name = "<buffer>") {
  detail::LibsvmParser<Scalar, Index> parser(options, name);
  const std::size_t tail = detail::parse_text(parser, text, options, name);
  return parser.finish(tail);
}

/// Reads an uncompressed LIBSVM file. `io/libsvm.hpp`'s `read_libsvm(path)` also reads
/// .gz and .bz2 files when `sparsemc::io` is linked.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_plain(const std::filesystem::path& path,
                                                       const LibsvmOptions& options = {}) {
  detail::FileSource source(path);
  return detail::read_blocks<Scalar, Index>(source, options, path.string());
}

}  // namespace sparsemc::io
