#pragma once
/// \file libsvm.hpp
/// LIBSVM / SVMlight data files in one include: `read_libsvm(path, options)` picks the
/// reader by extension — `.gz` (zlib), `.bz2` (libbz2), anything else plain text — and
/// `write_libsvm` writes text that reads back exactly.
///
/// The compressed readers are compiled in when the program links the CMake target
/// `sparsemc::io` (which defines `SPARSEMC_HAVE_ZLIB` and `SPARSEMC_HAVE_BZIP2`). With the
/// core target alone a compressed path throws `std::runtime_error` saying so, and no zlib
/// or libbz2 header is included. Link the same targets in every translation unit of a
/// program (CMake does this for you).
///
/// See `libsvm_reader.hpp` for the grammar, the options and the errors.
///
/// \code
///   #include <sparsemc/io/libsvm.hpp>
///   namespace io = sparsemc::io;
///   auto train = io::read_libsvm<double>("sector.scale.bz2");
///   auto test = io::read_libsvm<double>("sector.t.scale.bz2",
///                                       {.n_features = train.n_features(), .labels = train.encoder()});
///   auto ml = io::read_libsvm<float, std::int64_t>("bibtex.train",
///                                                  {.label_format = io::LabelFormat::multilabel});
///   io::write_libsvm("sector.copy", train);
/// \endcode

#include <filesystem>
#include <stdexcept>
#include <string>

#include "libsvm_reader.hpp"
#include "libsvm_writer.hpp"

#if defined(SPARSEMC_HAVE_ZLIB) || defined(SPARSEMC_HAVE_BZIP2)
#include "compressed.hpp"
#endif

namespace sparsemc::io {

/// Compression of a data file, from its extension.
enum class Compression { none, gzip, bzip2 };

/// `.gz` → gzip, `.bz2` → bzip2, anything else → none.
[[nodiscard]] inline Compression compression_of(const std::filesystem::path& path) {
  const auto extension = path.extension();
  if (extension == ".gz") return Compression::gzip;
  if (extension == ".bz2") return Compression::bzip2;
  return Compression::none;
}

/// Reads a LIBSVM file, plain or compressed (chosen by extension, see the file comment).
/// Malformed input throws `ParseError` (`file:line:column: what`); a file that cannot be
/// opened, read or decompressed throws `std::runtime_error`.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm(const std::filesystem::path& path,
                                                 const LibsvmOptions& options = {}) {
  switch (compression_of(path)) {
    case Compression::gzip:
#ifdef SPARSEMC_HAVE_ZLIB
      return read_libsvm_gzip<Scalar, Index>(path, options);
#else
      throw std::runtime_error(path.string() + ": reading .gz files needs zlib: link the CMake target sparsemc::io");
#endif
    case Compression::bzip2:
#ifdef SPARSEMC_HAVE_BZIP2
      return read_libsvm_bzip2<Scalar, Index>(path, options);
#else
      throw std::runtime_error(path.string() + ": reading .bz2 files needs libbz2: link the CMake target sparsemc::io");
#endif
    case Compression::none:
      break;
  }
  return read_libsvm_plain<Scalar, Index>(path, options);
}

}  // namespace sparsemc::io
