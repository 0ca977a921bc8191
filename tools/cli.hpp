#pragma once
/// \file cli.hpp
/// What the three command-line tools share about talking to a shell: the exit statuses, the
/// error types that select them, flag validators whose messages say what a flag accepts, the
/// `main` wrapper that turns exceptions into statuses, and small JSON helpers.
///
/// Exit statuses (documented in every tool's --help):
///   0  success (a solve that stops at --max-epochs or --time-limit is a success)
///   1  usage error: the message names the option and what it accepts
///   2  bad input: the reader's `file:line:column: what`, or a file that cannot be opened
///   3  numerical failure: the solver reported numerical_issue (non-finite values)

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sparsemc::tools {

/// The exit statuses of every sparsemc tool.
enum ExitStatus : int { exit_ok = 0, exit_usage = 1, exit_bad_input = 2, exit_numerical = 3 };

/// Text shared by the three --help footers.
inline constexpr const char* exit_status_help =
    "Exit status: 0 success (stopping at --max-epochs or --time-limit is a success),\n"
    "1 usage error (names the option and what it accepts), 2 bad input (file:line:column: what),\n"
    "3 numerical failure (non-finite values during the solve).";

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

/// A validator accepting a finite number `>= low` (or `> low` when `strict`); its message says
/// so: "--lambda: expects a number >= 0, got 'abc'".
inline CLI::Validator real_at_least(double low, bool strict = false) {
  const std::string rule = std::string(strict ? "> " : ">= ") + CLI::detail::to_string(low);
  return CLI::Validator(
      [low, strict, rule](std::string& text) -> std::string {
        double value = 0;
        if (!detail::parse_all(text, value) || !std::isfinite(value) || (strict ? value <= low : value < low))
          return "expects a number " + rule + ", got '" + text + "'";
        return {};
      },
      "", "");
}

/// A validator accepting a whole number `>= low`: "--max-epochs: expects an integer >= 1, got '2.5'".
inline CLI::Validator integer_at_least(long long low) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        long long value = 0;
        if (!detail::parse_all(text, value) || value < low)
          return "expects an integer >= " + std::to_string(low) + ", got '" + text + "'";
        return {};
      },
      "", "");
}

/// A validator accepting one of `choices`: "--loss: expects one of a|b|c, got 'x'".
inline CLI::Validator one_of(std::vector<std::string> choices) {
  std::string joined;
  for (const auto& c : choices) joined += (joined.empty() ? "" : "|") + c;
  return CLI::Validator(
      [choices, joined](std::string& text) -> std::string {
        for (const auto& c : choices)
          if (c == text) return {};
        return "expects one of " + joined + ", got '" + text + "'";
      },
      "", "");
}

/// Breaks a --help description into lines of at most `width` characters at blanks (CLI11
/// indents the continuation lines under the description column).
inline std::string wrap(std::string_view text, std::size_t width = 64) {
  std::string out, word;
  std::size_t line = 0;
  auto flush = [&] {
    if (word.empty()) return;
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') flush();
    else word += c;
  }
  flush();
  return out;
}

/// Runs a tool's body and maps what escapes it to the exit statuses above; every message goes
/// to stderr prefixed by the tool's name. `body` returns the exit status of a normal run.
template <class Body>
int run_tool(const char* tool, CLI::App& app, int argc, char** argv, Body&& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return exit_ok;
  } catch (const CLI::ParseError& e) {
    std::cerr << tool << ": error: " << e.what() << "\nRun '" << tool << " --help' for the accepted options.\n";
    return exit_usage;
  }
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << tool << ": error: " << e.what() << '\n';
    return exit_usage;
  } catch (const InputError& e) {
    std::cerr << tool << ": error: " << e.what() << '\n';
    return exit_bad_input;
  } catch (const NumericalError& e) {
    std::cerr << tool << ": error: numerical failure: " << e.what() << '\n';
    return exit_numerical;
  } catch (const std::invalid_argument& e) {
    // An Options::validate() or Problem::validate() complaint about a value the flags let through.
    std::cerr << tool << ": error: " << e.what() << '\n';
    return exit_usage;
  } catch (const std::bad_alloc&) {
    std::cerr << tool << ": error: out of memory\n";
    return exit_numerical;
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: " << e.what() << '\n';
    return exit_numerical;
  }
}

/// A JSON number, or null when the value is not finite (JSON has no NaN).
inline nlohmann::json json_number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace sparsemc::tools
