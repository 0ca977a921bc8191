#pragma once
/// \file any_model.hpp
/// Load a model file of any format sparsemc reads, told apart by its first word
/// (docs/model-format.md): `sparsemc-model` (native, model_io.hpp), `solver_type` (LIBLINEAR,
/// liblinear_model.hpp) or `sparsemc-staged-model` (a staged model, staged_model_io.hpp). The
/// file is read once, so a pipe (`/dev/stdin`, a process substitution) works as well as a file.
/// A file that is none of the three is reported by the native reader, at line 1, column 1.
///
/// \code
///   #include <sparsemc/io/any_model.hpp>
///   auto loaded = sparsemc::io::load_any_model<double>("dna.model");
///   if (auto* model = std::get_if<sparsemc::LinearModel<double>>(&loaded))
///     std::cout << model->nnz_rows() << " nonzero feature rows\n";
/// \endcode

#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "../core/traits.hpp"
#include "detail/model_text.hpp"
#include "liblinear_model.hpp"
#include "model_io.hpp"
#include "staged_model_io.hpp"

namespace sparsemc::io {

/// A model as read from a file: a linear model (native or LIBLINEAR) or a staged one.
template <RealScalar Scalar>
using AnyModel = std::variant<LinearModel<Scalar>, StagedModel<Scalar>>;

/// Parses the text of a model file of any format; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] AnyModel<Scalar> parse_any_model(std::string_view text, std::string source) {
  const std::size_t begin = std::min(text.find_first_not_of(" \t\r\n"), text.size());
  const std::string_view first = text.substr(begin, text.find_first_of(" \t\r\n", begin) - begin);
  if (first == "solver_type") return parse_liblinear_model<Scalar>(text, std::move(source));
  if (first == "sparsemc-staged-model") return parse_staged_model<Scalar>(text, std::move(source));
  return parse_model<Scalar>(text, std::move(source));
}

/// Reads a model of any format from a stream; `source` names it in error messages.
template <RealScalar Scalar = double>
[[nodiscard]] AnyModel<Scalar> load_any_model(std::istream& in, std::string source = "<stream>") {
  return parse_any_model<Scalar>(detail::read_model_stream(in), std::move(source));
}

/// Reads a model file of any format.
template <RealScalar Scalar = double>
[[nodiscard]] AnyModel<Scalar> load_any_model(const std::filesystem::path& path) {
  return parse_any_model<Scalar>(detail::read_model_file(path), path.string());
}

}  // namespace sparsemc::io
