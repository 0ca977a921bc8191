#pragma once
/// \file cli.hpp
/// What the three command-line tools share about talking to a shell: the exit statuses and the
/// error types that select them (errors.hpp), flag validators whose messages say what a flag
/// accepts, the `main` wrapper that turns exceptions into statuses, and small JSON helpers.
///
/// Exit statuses (documented in every tool's --help):
///   0  success (a solve that stops at --max-epochs or --time-limit is a success)
///   1  usage error: the message names the option and what it accepts
///   2  bad input: the reader's `file:line:column: what`, or a file that cannot be opened
///   3  numerical failure: the solver reported numerical_issue (non-finite values)

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sparsemc/version.hpp>

#include "errors.hpp"

#include <cmath>
#include <exception>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sparsemc::tools {

/// The exit statuses as the --help footer of sparsemc-train says them.
inline constexpr const char* train_exit_status_help =
    "Exit status: 0 success (stopping at --max-epochs or --time-limit is a success),\n"
    "1 usage error (names the option and what it accepts), 2 bad input (file:line:column: what),\n"
    "3 numerical failure (non-finite values during the solve; the model is not written).";

/// The exit statuses as the --help footers of sparsemc-predict and sparsemc-eval say them.
inline constexpr const char* apply_exit_status_help =
    "Exit status: 0 success, 1 usage error (names the option and what it accepts),\n"
    "2 bad input (file:line:column: what, or a file that cannot be opened or written),\n"
    "3 failure beyond the input (out of memory).";

/// Adds --version ("NAME VERSION") to a tool.
inline void add_version_flag(CLI::App& app, const std::string& tool) {
  app.set_version_flag("--version", tool + " " SPARSEMC_VERSION_STRING, "print the version and exit");
}

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

/// Adds --threads N to a tool (0, the default: every core); `used_by` says what runs on them.
inline void add_threads_option(CLI::App& app, int& threads, const std::string& used_by) {
  app.add_option("--threads", threads,
                 wrap("threads, an integer >= 0 (default 0: every core, OMP_NUM_THREADS if set; 1 in a build without "
                      "OpenMP). Used by " + used_by))
      ->type_name("N")
      ->check(integer_at_least(0));
}

/// Makes `threads` (> 0; 0 keeps OpenMP's default) the team of the tool's parallel loops.
inline void use_threads(int threads) {
#ifdef SPARSEMC_USE_OPENMP
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
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
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << '\n';
    return exit_ok;
  } catch (const CLI::Success&) {
    return exit_ok;  // a flag that printed what was asked (--list-solvers) and ends the run
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

/// Why a duality gap is not a finite number: +inf means the dual point built from the model
/// gives no finite bound, NaN that it was not evaluated (a solver of another problem, a staged
/// model, non-finite values). "" if finite. (With --penalty none and --mu 0 the gap is finite
/// but useless: D = D(0), relative gap about 1, the problem has no certificate.)
inline std::string gap_note(double gap) {
  if (std::isnan(gap)) return "not evaluated";
  if (std::isinf(gap)) return "infinite: no finite certificate at this model";
  return {};
}

/// The certificate of a fit or a model in JSON: "duality_gap" (F − D, an upper bound on
/// F − F*) and "relative_gap" (gap / max(|F|, 1e-12)); null when not finite, and then
/// "gap_note" says why (gap_note above). JSON has no infinity, hence null plus the note.
inline void add_gap_json(nlohmann::json& j, double gap, double relative) {
  if (std::isnan(relative)) gap = relative;  // an unevaluated certificate: both NaN
  j["duality_gap"] = json_number(gap);
  j["relative_gap"] = json_number(relative);
  if (const std::string note = gap_note(gap); !note.empty()) j["gap_note"] = note;
}

/// The certificate as text: "duality gap X (relative Y)", with the reason when it is not finite.
inline std::string describe_gap(double gap, double relative) {
  if (std::isnan(relative)) gap = relative;
  std::ostringstream os;
  os << std::setprecision(4) << "duality gap " << gap << " (relative " << relative << ")";
  if (const std::string note = gap_note(gap); !note.empty()) os << ": " << note;
  return os.str();
}

}  // namespace sparsemc::tools
