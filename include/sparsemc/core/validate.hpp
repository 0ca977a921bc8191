#pragma once
/// \file validate.hpp
/// Helpers for `Options::validate()`: each throws `std::invalid_argument` naming the field,
/// the allowed range and the value received ("tol must be > 0, got -1").

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace sparsemc::detail {

template <class T>
[[noreturn]] void fail_option(std::string_view field, std::string_view rule, const T& got) {
  std::ostringstream os;
  os << field << " must be " << rule << ", got " << got;
  throw std::invalid_argument(os.str());
}

template <class T>
void require_positive(std::string_view field, T value) {
  if (!(value > T(0))) fail_option(field, "> 0", value);
}

template <class T>
void require_nonnegative(std::string_view field, T value) {
  if (!(value >= T(0))) fail_option(field, ">= 0", value);
}

template <class T>
void require_in_open_interval(std::string_view field, T value, T lo, T hi) {
  if (!(value > lo && value < hi)) {
    std::ostringstream rule;
    rule << "in (" << lo << ", " << hi << ")";
    fail_option(field, rule.str(), value);
  }
}

template <class T>
void require_in_half_open_interval(std::string_view field, T value, T lo, T hi) {
  if (!(value > lo && value <= hi)) {
    std::ostringstream rule;
    rule << "in (" << lo << ", " << hi << "]";
    fail_option(field, rule.str(), value);
  }
}

template <class T>
void require_finite(std::string_view field, T value) {
  if (!std::isfinite(static_cast<double>(value))) fail_option(field, "finite", value);
}

/// The stopping fields every solver's options share: tol > 0 finite, max_epochs ≥ 1,
/// time_limit ≥ 0 finite (0 = none).
template <class Integer>
void require_stopping_rule(double tol, Integer max_epochs, double time_limit) {
  require_positive("tol", tol);
  require_finite("tol", tol);
  require_positive("max_epochs", max_epochs);
  require_nonnegative("time_limit", time_limit);
  require_finite("time_limit", time_limit);
}

}  // namespace sparsemc::detail
