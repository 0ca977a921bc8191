#pragma once
/// \file model_text.hpp
/// Internal: line/token scanning with positions and shortest round-trip number formatting,
/// shared by the native and LIBLINEAR model readers/writers. Not part of the public API.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "../parse_error.hpp"

namespace sparsemc::io::detail {

/// The whole content of a file; throws std::runtime_error if it cannot be read.
inline std::string read_model_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open model file '" + path.string() + "' for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("error while reading model file '" + path.string() + "'");
  return text;
}

/// The whole content of a stream.
inline std::string read_model_stream(std::istream& in) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

/// Writes `text` to `path` (truncating); throws std::runtime_error on failure.
inline void write_model_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open model file '" + path.string() + "' for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) throw std::runtime_error("error while writing model file '" + path.string() + "'");
}

/// Appends the shortest decimal text that reads back to exactly `value` (std::to_chars).
template <class T>
void append_number(std::string& out, T value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;  // 64 characters hold any int64 and any shortest float/double
  out.append(buffer, end);
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
    if (r.ec == std::errc::result_out_of_range) fail(t.column, std::string(what) + " " + quote(t.text) + " is out of range");
    if (r.ec != std::errc() || r.ptr != last) fail(t.column, "expected " + std::string(what) + ", got " + quote(t.text));
    if constexpr (std::is_floating_point_v<T>) {
      if (!allow_non_finite && !std::isfinite(value)) fail(t.column, std::string(what) + " " + quote(t.text) + " is not finite");
    }
    return value;
  }

  [[noreturn]] void fail(std::int64_t column, std::string message) const {
    throw ParseError(source_, line_number_, column, std::move(message));
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
