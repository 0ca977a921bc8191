#pragma once
/// \file traits.hpp
/// Scalar and index types every sparsemc template is instantiated with, as concepts.

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace sparsemc {

/// Floating-point type of data, weights and objectives: `float` or `double`.
template <class T>
concept RealScalar = std::same_as<T, float> || std::same_as<T, double>;

/// Integer type of sparse indices and pointers: 32- or 64-bit signed.
template <class T>
concept StorageIndex = std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

/// A class label as it appears in a data file (LIBSVM labels are integers; gaps allowed).
using Label = std::int64_t;

/// A class index 0..K-1 (the column of W a label maps to).
using ClassIndex = std::int32_t;

}  // namespace sparsemc
