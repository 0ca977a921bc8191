#pragma once
/// The scalar types of the solver tests' templated cases. The Release tests compile float and
/// double; the sanitizer build (CMake option SPARSEMC_TESTS_DOUBLE_ONLY, on in the asan preset)
/// compiles double only. ASan and UBSan check index arithmetic, layouts and control flow, which a
/// solver's float instantiation shares with its double one, while float's numerics are checked
/// in the Release run; the float instantiations were half of the sanitizer build's compile time
/// of a solver test (test_gls.cpp: 174 s of CPU, 89 s without them). The readers, the model files,
/// the losses and the prox operators keep float under the sanitizers: their float paths are code
/// of their own (parsing, printing, closed forms).
///
///   TEMPLATE_TEST_CASE("...", "[tag]", SPARSEMC_TEST_SCALARS) { using Scalar = TestType; ... }
///   TEMPLATE_LIST_TEST_CASE("...", "[tag]", sparsemc_test::SolverTestTypes<std::tuple<...>>) {...}

#include <tuple>
#include <type_traits>

#ifdef SPARSEMC_TESTS_DOUBLE_ONLY
#define SPARSEMC_TEST_SCALARS double
#else
#define SPARSEMC_TEST_SCALARS float, double
#endif

namespace sparsemc_test {

namespace detail {

template <class List>
struct WithoutFloat;

/// The (Scalar, ...) tuples of the list whose Scalar is not float.
template <class... Entries>
struct WithoutFloat<std::tuple<Entries...>> {
  using type = decltype(std::tuple_cat(
      std::declval<std::conditional_t<std::is_same_v<std::tuple_element_t<0, Entries>, float>, std::tuple<>,
                                      std::tuple<Entries>>>()...));
};

}  // namespace detail

/// A TEMPLATE_LIST_TEST_CASE's list of (Scalar, Index, ...) tuples, without the float entries in
/// the sanitizer build (the list should then still hold each index type and layout once).
#ifdef SPARSEMC_TESTS_DOUBLE_ONLY
template <class List>
using SolverTestTypes = typename detail::WithoutFloat<List>::type;
#else
template <class List>
using SolverTestTypes = List;
#endif

}  // namespace sparsemc_test
