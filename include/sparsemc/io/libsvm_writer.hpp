#pragma once
/// \file libsvm_writer.hpp
/// Writes a dataset as LIBSVM / SVMlight text that `read_libsvm` reads back exactly: the
/// same X (every stored entry, explicit zeros included, bit for bit), the same labels.
///
/// Each line is `labels idx:val ...` with the sample's labels as read (the label table maps
/// class indices back), comma-separated when there are several; a sample with no label
/// starts with a blank, as in the multilabel files of the Extreme Classification repository.
/// A multiclass dataset therefore gives a classic LIBSVM file. A multilabel dataset in which
/// no sample has two labels has no comma in its text: read it back with
/// `LabelFormat::multilabel` (the reader detects multilabel files by their commas only). Values are printed with
/// `std::to_chars` in the shortest form that reads back to the same float or double.
/// A sample with neither a label nor a feature is written ` qid:0` (a blank line would be
/// skipped by readers). Non-finite values cannot be written and throw.
///
/// \code
///   #include <sparsemc/io/libsvm_writer.hpp>
///   auto data = sparsemc::io::read_libsvm<double>("train.svm");
///   sparsemc::io::write_libsvm("copy.svm", data);                 // 1-based indices
///   sparsemc::io::write_libsvm(std::cout, data, {.zero_based = true});
/// \endcode

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../data/dataset.hpp"
#include "atomic_file.hpp"

namespace sparsemc::io {

/// Options of the LIBSVM writer.
struct LibsvmWriteOptions {
  /// Write feature indices from 0 instead of LIBSVM's 1 (read back with `zero_based`).
  bool zero_based = false;
};

/// Writes X (CSR) with class sets y, whose class indices `encoder` maps back to labels.
template <RealScalar Scalar, StorageIndex Index>
void write_libsvm(std::ostream& out, const CsrView<Scalar, Index>& X, const LabelView& y,
                  const LabelEncoder& encoder, const LibsvmWriteOptions& options = {}) {
  if (static_cast<std::size_t>(X.rows()) != y.size())
    throw std::invalid_argument("write_libsvm: X has " + std::to_string(X.rows()) + " rows but y has " +
                                std::to_string(y.size()) + " samples");
  const std::int64_t base = options.zero_based ? 0 : 1;
  // Text is assembled in a buffer and handed to the stream in large pieces.
  constexpr std::size_t flush_at = std::size_t{1} << 20;
  constexpr std::size_t token_room = 96;  // longest token: two 20-digit integers, a value, ':' and ' '
  std::vector<char> buffer(flush_at + token_room);
  std::size_t used = 0;
  auto flush = [&] {
    out.write(buffer.data(), static_cast<std::streamsize>(used));
    used = 0;
  };
  auto put_integer = [&](std::int64_t v) {
    used = static_cast<std::size_t>(std::to_chars(buffer.data() + used, buffer.data() + buffer.size(), v).ptr - buffer.data());
  };

  for (Index i = 0; i < X.rows(); ++i) {
    const auto classes = y[static_cast<std::size_t>(i)];
    const auto row = X.outer(i);
    for (std::size_t k = 0; k < classes.size(); ++k) {
      if (used > flush_at) flush();
      if (k > 0) buffer[used++] = ',';
      put_integer(encoder.label_of(classes[k]));
    }
    if (classes.empty() && row.empty()) {
      static constexpr char empty_qid[] = " qid:0";
      for (char c : std::string_view(empty_qid)) buffer[used++] = c;
    }
    for (auto [j, v] : row) {
      if (!std::isfinite(v))
        throw std::invalid_argument("write_libsvm: X(" + std::to_string(i) + ", " + std::to_string(j) +
                                    ") is not finite; LIBSVM text cannot hold it");
      if (used > flush_at) flush();
      buffer[used++] = ' ';
      put_integer(static_cast<std::int64_t>(j) + base);
      buffer[used++] = ':';
      used = static_cast<std::size_t>(std::to_chars(buffer.data() + used, buffer.data() + buffer.size(), v).ptr -
                                      buffer.data());
    }
    buffer[used++] = '\n';
  }
  flush();
  if (!out) throw std::runtime_error("write_libsvm: write error");
}

/// Writes a Dataset (X as read, its labels and label table).
template <RealScalar Scalar, StorageIndex Index>
void write_libsvm(std::ostream& out, const Dataset<Scalar, Index>& data, const LibsvmWriteOptions& options = {}) {
  write_libsvm(out, data.csr(), data.labels().view(), data.encoder(), options);
}

/// Writes a Dataset to a file, atomically (io/atomic_file.hpp: written to a temporary file
/// in the same directory and renamed over `path`; a failed write keeps the old file).
template <RealScalar Scalar, StorageIndex Index>
void write_libsvm(const std::filesystem::path& path, const Dataset<Scalar, Index>& data,
                  const LibsvmWriteOptions& options = {}) {
  write_file_atomically(path, [&](std::ostream& out) { write_libsvm(out, data, options); });
}

}  // namespace sparsemc::io
