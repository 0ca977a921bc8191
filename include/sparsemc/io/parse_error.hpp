#pragma once
/// \file parse_error.hpp
/// The one exception every sparsemc reader throws on malformed input (data files, native
/// models, LIBLINEAR models). Its message has the compiler-style form
///
///     path:line:column: what went wrong
///
/// with 1-based line and column (the column is the byte of the offending token within the
/// line), so editors and terminals can jump to the spot. The parts are also available
/// separately. It derives from `std::runtime_error`: code that only wants the message can
/// catch that.
///
/// \code
///   try {
///     auto model = sparsemc::io::load_model<double>("model.txt");
///   } catch (const sparsemc::io::ParseError& e) {
///     std::cerr << e.what() << '\n';             // "model.txt:7:12: expected a number, got 'x'"
///     if (e.line() == 1) { ... }                  // e.file(), e.line(), e.column(), e.message()
///   }
/// \endcode

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace sparsemc::io {

/// A malformed input at a known position: `what()` is "file:line:column: message".
class ParseError : public std::runtime_error {
 public:
  /// `line` and `column` are 1-based; a column of 0 means "the line as a whole".
  ParseError(std::string file, std::int64_t line, std::int64_t column, std::string message)
      : std::runtime_error(file + ':' + std::to_string(line) + ':' + std::to_string(column) + ": " + message),
        file_(std::move(file)), line_(line), column_(column), message_(std::move(message)) {}

  /// The file (or stream name) being read.
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  /// 1-based line of the error.
  [[nodiscard]] std::int64_t line() const noexcept { return line_; }
  /// 1-based byte column of the error within its line (0: the whole line).
  [[nodiscard]] std::int64_t column() const noexcept { return column_; }
  /// The message without the position prefix.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::int64_t column_;
  std::string message_;
};

}  // namespace sparsemc::io
