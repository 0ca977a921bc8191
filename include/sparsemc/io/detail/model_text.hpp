#pragma once
/// \file model_text.hpp
/// Internal: line/token scanning with positions and shortest round-trip number formatting,
/// shared by the native and LIBLINEAR model readers/writers. Not part of the public API.

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "number.hpp"
#include "../parse_error.hpp"

namespace sparsemc::io::detail {

/// The whole content of a file; throws std::runtime_error naming the file if it cannot be
/// read (missing, a directory, a read error).
inline std::string read_model_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(path.string() + ": cannot read the model file: is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(path.string() + ": cannot open the model file" +
                             (errno != 0 ? " (" + std::generic_category().message(errno) + ")" : std::string()));
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {  // libstdc++ throws from underflow on EISDIR, EIO
    throw std::runtime_error(path.string() + ": error while reading the model file (" + e.what() + ")");
  }
  if (in.bad()) throw std::runtime_error(path.string() + ": error while reading the model file");
  return text;
}

/// The whole content of a stream.
inline std::string read_model_stream(std::istream& in) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

/// Writes `text` to `path` atomically (io/atomic_file.hpp: a failed write keeps the old file);
/// throws std::runtime_error naming the file on failure.
inline void write_model_file(const std::filesystem::path& path, const std::string& text) {
  write_file_atomically(path, std::string_view(text));
}

/// Where a model writer puts its text. Without a stream (`format_model`) the whole text
/// stays in `text`. With one (`save_model`), `text` is a buffer that goes to the stream once a
/// row ends past `chunk` characters: a model file of a few hundred MB (a dense K = 1000 model)
/// is written without ever being held whole in memory beside the model.
class ModelText {
 public:
  /// Characters buffered before a row's end hands them to the stream.
  static constexpr std::size_t chunk = std::size_t{1} << 20;

  ModelText() = default;
  explicit ModelText(std::ostream& out) : out_(&out) { text.reserve(2 * chunk); }

  /// Reserves the whole text's estimated `size` when it is kept (no stream).
  void expect(std::size_t size) {
    if (out_ == nullptr) text.reserve(size);
  }

  /// After a row: the buffer goes to the stream once it holds a chunk.
  void row_done() {
    if (out_ != nullptr && text.size() >= chunk) write_out();
  }

  /// After the last row: what is left goes to the stream.
  void finish() {
    if (out_ != nullptr) write_out();
  }

  std::string text;

 private:
  void write_out() {
    out_->write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  }

  std::ostream* out_ = nullptr;
};

/// Appends the shortest decimal text that reads back to exactly `value` (std::to_chars).
template <class T>
void append_number(std::string& out, T value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;  // 64 characters hold any int64 and any shortest float/double
  out.append(buffer, end);
}

/// The position in `values` of the first value that repeats an earlier one (its second
/// occurrence, the earliest such), or -1: O(K log K), for label tables of any size.
template <class T>
[[nodiscard]] std::int64_t first_repeat(const std::vector<T>& values) {
  std::vector<std::pair<T, std::int64_t>> sorted(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) sorted[k] = {values[k], static_cast<std::int64_t>(k)};
  std::sort(sorted.begin(), sorted.end());
  std::int64_t first = -1;
  for (std::size_t k = 1; k < sorted.size(); ++k)
    if (sorted[k].first == sorted[k - 1].first && (first < 0 || sorted[k].second < first)) first = sorted[k].second;
  return first;
}

/// A whitespace-separated token and its 1-based column.
struct Token {
  std::string_view text;
  std::int64_t column = 0;
  [[nodiscard]] bool empty() const noexcept { return text.empty(); }
};

/// Walks a text line by line (LF or CRLF) and each line token by token (spaces and tabs
/// separate), reporting errors as ParseError at "source:line:column".
class TextCursor {
 public:
  TextCursor(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  /// Moves to the next line; false (and nothing changes) at the end of the text.
  bool next_line() {
    if (next_ >= text_.size()) return false;
    const std::size_t end = text_.find('\n', next_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line_ = text_.substr(next_, stop - next_);
    if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
    next_ = end == std::string_view::npos ? text_.size() : end + 1;
    pos_ = 0;
    ++line_number_;
    return true;
  }
  /// Like next_line() but an end of text is an error: "expected <what>".
  void require_line(std::string_view what) {
    if (!next_line()) fail_at_end("unexpected end of file, expected " + std::string(what));
  }

  [[nodiscard]] std::int64_t line_number() const noexcept { return line_number_; }
  /// Bytes of the text after the current line: an upper bound on what later lines can hold,
  /// against which counts announced in a header are checked before anything is sized by them.
  [[nodiscard]] std::int64_t bytes_left() const noexcept { return static_cast<std::int64_t>(text_.size() - next_); }
  /// Bytes of the current line after the cursor.
  [[nodiscard]] std::int64_t bytes_left_on_line() const noexcept { return static_cast<std::int64_t>(line_.size() - pos_); }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// True when only spaces and tabs remain on the current line.
  [[nodiscard]] bool at_end_of_line() {
    skip_blanks();
    return pos_ >= line_.size();
  }

  /// The next token of the current line (empty at the end of the line).
  Token token() {
    skip_blanks();
    const std::size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
    return {line_.substr(start, pos_ - start), static_cast<std::int64_t>(start) + 1};
  }
  /// The next token without consuming it.
  [[nodiscard]] Token peek() {
    const std::size_t saved = pos_;
    const Token t = token();
    pos_ = saved;
    return t;
  }
  /// The next token, which must exist: otherwise "expected <what>" at the end of the line.
  Token expect_token(std::string_view what) {
    Token t = token();
    if (t.empty()) fail(t.column, "expected " + std::string(what) + " before the end of the line");
    return t;
  }
  /// The next token must be exactly `keyword`.
  void expect_keyword(std::string_view keyword) {
    const Token t = token();
    if (t.text != keyword)
      fail(t.column, "expected '" + std::string(keyword) + "', got " + (t.empty() ? std::string("an empty line") : quote(t.text)));
  }
  /// Nothing but blanks may follow on this line.
  void expect_end_of_line(std::string_view after) {
    const Token t = token();
    if (!t.empty()) fail(t.column, "unexpected " + quote(t.text) + " after " + std::string(after));
  }
  /// The rest of the line without leading and trailing blanks (may be empty).
  std::string_view rest_of_line() {
    skip_blanks();
    std::string_view rest = line_.substr(pos_);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    pos_ = line_.size();
    return rest;
  }

  /// The next token as a number of type T (integers in range, floating point finite unless
  /// `allow_non_finite`); errors name `what`.
  template <class T>
  T number(std::string_view what, bool allow_non_finite = false) {
    const Token t = expect_token(what);
    return parse<T>(t, what, allow_non_finite);
  }
  template <class T>
  T parse(const Token& t, std::string_view what, bool allow_non_finite = false) const {
    T value{};
    const char* first = t.text.data();
    const char* last = first + t.text.size();
    std::from_chars_result r{};
    if constexpr (std::is_floating_point_v<T>) {
      r = std::from_chars(first, last, value, std::chars_format::general);
    } else {
      r = std::from_chars(first, last, value);
    }
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow rounds to 0 or a subnormal (as strtod); overflow is an error.
      if constexpr (std::is_floating_point_v<T>) {
        if (r.ptr == last && round_out_of_range(first, last, value)) return value;
      }
      fail(t.column, std::string(what) + " " + quote(t.text) + " is out of range");
    }
    if (r.ec != std::errc() || r.ptr != last) fail(t.column, "expected " + std::string(what) + ", got " + quote(t.text));
    if constexpr (std::is_floating_point_v<T>) {
      if (!allow_non_finite && !std::isfinite(value)) fail(t.column, std::string(what) + " " + quote(t.text) + " is not finite");
    }
    return value;
  }

  [[noreturn]] void fail(std::int64_t column, std::string message) const {
    throw ParseError(source_, line_number_, column, std::move(message));
  }
  /// An error at an earlier position (a count whose contents turned out wrong).
  [[noreturn]] void fail_at(std::int64_t line, std::int64_t column, std::string message) const {
    throw ParseError(source_, line, column, std::move(message));
  }
  /// An error one past the last line (the file ended too early).
  [[noreturn]] void fail_at_end(std::string message) const {
    throw ParseError(source_, line_number_ + 1, 1, std::move(message));
  }

  static std::string quote(std::string_view s) {
    std::string quoted(1, '\'');  // appended, not "'" + s: GCC 12 warns falsely (-Wrestrict) on the insert
    (quoted += s) += '\'';
    return quoted;
  }

 private:
  void skip_blanks() noexcept {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }

  std::string_view text_;
  std::string source_;
  std::size_t next_ = 0;
  std::string_view line_;
  std::size_t pos_ = 0;
  std::int64_t line_number_ = 0;
};

}  // namespace sparsemc::io::detail
