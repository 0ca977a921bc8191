#pragma once
/// \file number.hpp
/// Internal: what a decimal number outside a floating-point type's range becomes, shared by
/// the LIBSVM and model readers. `std::from_chars` reports both overflow and underflow as
/// `result_out_of_range`; the readers treat them differently, as strtod does: a magnitude
/// below the smallest subnormal rounds to zero (or to the nearest subnormal), and one above
/// the largest finite value is an error.

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace sparsemc::io::detail {

/// The text [first, last), which `std::from_chars` found to be a well-formed number out of the
/// range of T, rounded into T when it is an underflow (stored in `value`, true); false when it
/// is an overflow. The text is read again by strtold (the token is copied: it is not
/// NUL-terminated), whose long double range is only a first filter: numbers beyond it, such as
/// 1e-5000, come back as 0 with ERANGE and are an underflow too.
template <class T>
[[nodiscard]] bool round_out_of_range(const char* first, const char* last, T& value) {
  const std::string token(first, last);
  char* end = nullptr;
  errno = 0;
  const long double wide = std::strtold(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return false;  // not strtold's number either: refuse
  if (std::fabs(wide) > static_cast<long double>(std::numeric_limits<T>::max())) return false;
  value = static_cast<T>(wide);  // 0 or a subnormal, with the sign of the text
  return true;
}

}  // namespace sparsemc::io::detail
