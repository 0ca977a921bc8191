#pragma once
/// \file progress.hpp
/// What sparsemc-train prints on stderr while it works, LIBLINEAR-style. By default a run that
/// lasts says what it is doing: a line per data file whose reading took a second or more (its
/// size and MB/s), then an epoch line about once a second; a run that ends within a second
/// prints nothing. `--verbose` prints every file and every epoch, `--quiet` nothing. stdout
/// (the summary, or the --json object) is never touched.

#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <string>
#include <system_error>

#include <sparsemc/core/callbacks.hpp>
#include <sparsemc/core/stopwatch.hpp>

namespace sparsemc::tools {

/// --quiet, the default, --verbose.
enum class Verbosity { quiet, normal, verbose };

/// The progress reporter of one tool run (see the file comment).
class Progress {
 public:
  /// Seconds between two epoch lines at the default verbosity, and the run time after which
  /// the first one is printed.
  static constexpr double interval = 1.0;

  Progress(Verbosity verbosity, std::ostream& out) : verbosity_(verbosity), out_(&out) {}

  /// After reading `path` (n × d, nnz stored values) in `seconds`: a line when verbose or when
  /// the reading was slow enough to be noticed.
  void file_read(const std::string& path, std::int64_t n, std::int64_t d, std::int64_t nnz, double seconds) const {
    if (verbosity_ == Verbosity::quiet || (verbosity_ == Verbosity::normal && seconds < interval)) return;
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    const double mb = ec ? 0.0 : static_cast<double>(bytes) / 1e6;
    *out_ << "read " << path << ": " << n << " samples, " << d << " features, " << nnz << " nonzeros";
    if (!ec)
      *out_ << std::fixed << std::setprecision(1) << ", " << mb << " MB in " << seconds << " s (" << mb / seconds
            << " MB/s)" << std::defaultfloat << std::setprecision(6);
    *out_ << '\n' << std::flush;
  }

  /// The fits' per-epoch hook (ToolCallback::on_epoch): an epoch line when one is due. Never
  /// stops the solve.
  bool epoch(const EpochReport& report) {
    if (verbosity_ == Verbosity::quiet) return false;
    const double now = clock_.seconds();
    if (verbosity_ == Verbosity::normal && now < next_line_) return false;
    next_line_ = now + interval;
    ProgressPrinter(*out_).end_epoch(report);
    out_->flush();
    return false;
  }

 private:
  Verbosity verbosity_;
  std::ostream* out_;
  Stopwatch clock_;               ///< since the run started
  double next_line_ = interval;  ///< the default verbosity's next epoch line, on clock_
};

}  // namespace sparsemc::tools
