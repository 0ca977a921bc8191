#pragma once
/// \file errors.hpp
/// The tools' exit statuses and the error types that select them, and the strict number parser
/// their options share: what the solver registry needs of the command line, without the
/// command-line parser itself (cli.hpp has that; a registry family need not compile it).

#include <charconv>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace sparsemc::tools {

/// The exit statuses of every sparsemc tool.
enum ExitStatus : int { exit_ok = 0, exit_usage = 1, exit_bad_input = 2, exit_numerical = 3 };

/// A flag or a combination of flags the tool cannot honour (exit 1). The message names the
/// option and what it accepts.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A data or model file that cannot be opened or parsed (exit 2). The message is the reader's
/// `file:line:column: what`, or `file: what` when there is no position.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A solve that produced non-finite values (exit 3).
struct NumericalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

/// Parses all of `text` as a T with std::from_chars; false on any leftover character.
template <class T>
bool parse_all(std::string_view text, T& value) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // from_chars rejects a leading '+'
  const auto [end, ec] = std::from_chars(first, last, value);
  return ec == std::errc() && end == last && first != last;
}

}  // namespace detail

}  // namespace sparsemc::tools
