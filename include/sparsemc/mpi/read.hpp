#pragma once
/// \file read.hpp
/// A LIBSVM file read in parts, one per rank: `read_libsvm_part` gives each rank the samples
/// of its share of the file — for a plain file the bytes [rS/P, (r+1)S/P) moved to line
/// starts, read by the rank itself (no rank reads the whole file); for a .gz or .bz2 file rank
/// 0 decompresses the stream and sends each rank its share of the lines (compressed data
/// cannot be entered in the middle; decompress the file first when the text does not fit one
/// rank). The ranks then agree on what the serial reader decides at the end of the input —
/// the label table (every label of the file, sorted), d (the largest index), the label format
/// (multilabel when any line has a label list) — so that the parts, stacked in rank order,
/// are the serial reader's Dataset: same X, same class indices, and the same error for a
/// malformed file (`file:line:column: what`, the first in file order, on every rank).
///
/// `gather_dataset` stacks the parts on every rank (the class partition, where every rank
/// needs every sample).
///
/// \code
///   sparsemc::mpi::Communicator world;
///   sparsemc::mpi::PartOfFile where;
///   auto part = sparsemc::mpi::read_libsvm_part<double>(world, "train.svm", {}, &where);
///   // samples [where.first_sample, where.first_sample + part.n_samples()) of where.n_samples
///   auto all = sparsemc::mpi::gather_dataset(world, part);
/// \endcode

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "../data/dataset.hpp"
#include "../io/libsvm.hpp"
#include "communicator.hpp"

namespace sparsemc::mpi {

/// Where a rank's part lies in the file: its first sample's index in the whole, and the
/// samples of the whole.
struct PartOfFile {
  std::int64_t first_sample = 0;
  std::int64_t n_samples = 0;
};

namespace detail {

/// ⌊size·r/P⌋, the byte where rank r's share of `size` bytes starts (before moving to a line
/// start), without overflow.
inline std::size_t share_start(std::size_t size, int r, int ranks) {
  const auto p = static_cast<std::size_t>(ranks), k = static_cast<std::size_t>(r);
  return size / p * k + size % p * k / p;
}

/// The first line start at or after byte `position` of a file of `size` bytes: `position`
/// itself when it is 0 or follows a '\n', else the byte after the next '\n' (`size` if none).
inline std::size_t line_start_at(std::FILE* file, std::size_t position, std::size_t size, const std::string& name) {
  if (position == 0 || position >= size) return std::min(position, size);
  if (std::fseek(file, static_cast<long>(position - 1), SEEK_SET) != 0)
    throw std::runtime_error(name + ": cannot seek to byte " + std::to_string(position - 1));
  char buffer[4096];
  std::size_t at = position - 1;
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file);
    if (got == 0) return size;
    const auto* newline = static_cast<const char*>(std::memchr(buffer, '\n', got));
    if (newline != nullptr) return at + static_cast<std::size_t>(newline - buffer) + 1;
    at += got;
  }
}

/// Bytes [begin, end) of a plain file.
inline std::string read_bytes(std::FILE* file, std::size_t begin, std::size_t end, const std::string& name) {
  std::string text(end - begin, '\0');
  if (end == begin) return text;
  if (std::fseek(file, static_cast<long>(begin), SEEK_SET) != 0 ||
      std::fread(text.data(), 1, text.size(), file) != text.size())
    throw std::runtime_error(name + ": read error at byte " + std::to_string(begin));
  return text;
}

/// This rank's share of a plain file: the lines starting in [rS/P, (r+1)S/P).
inline std::string plain_share(const Communicator& comm, const std::filesystem::path& path) {
  const std::string name = path.string();
  std::FILE* file = std::fopen(name.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error(name + ": cannot open (" + std::generic_category().message(errno) + ")");
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{file};
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  const auto cut = [&](int r) { return line_start_at(file, share_start(size, r, comm.size()), size, name); };
  const std::size_t begin = cut(comm.rank());
  const std::size_t end = comm.rank() + 1 == comm.size() ? size : cut(comm.rank() + 1);
  return read_bytes(file, begin, end, name);
}

/// The whole decompressed text of a .gz or .bz2 file (rank 0 only).
inline std::string decompressed_text(const std::filesystem::path& path) {
  io::detail::FileSource file(path);
  std::string text;
  const auto drain = [&](auto& source) {
    std::size_t got = 0;
    do {
      const std::size_t at = text.size();
      text.resize(at + (std::size_t{16} << 20));
      got = source.read(text.data() + at, text.size() - at);
      text.resize(at + got);
    } while (got > 0);
  };
  switch (io::compression_of(path)) {
    case io::Compression::gzip: {
#ifdef SPARSEMC_HAVE_ZLIB
      io::detail::GzipSource source(file, path.string());
      drain(source);
      return text;
#else
      throw std::runtime_error(path.string() + ": reading .gz files needs zlib: link the CMake target sparsemc::io");
#endif
    }
    case io::Compression::bzip2: {
#ifdef SPARSEMC_HAVE_BZIP2
      io::detail::Bzip2Source source(file, path.string());
      drain(source);
      return text;
#else
      throw std::runtime_error(path.string() + ": reading .bz2 files needs libbz2: link the CMake target sparsemc::io");
#endif
    }
    case io::Compression::none:
      break;
  }
  drain(file);
  return text;
}

/// This rank's share of a compressed file: rank 0 decompresses it and sends rank r the
/// lines starting in [rS/P, (r+1)S/P) of the text.
inline std::string compressed_share(const Communicator& comm, const std::filesystem::path& path) {
  std::string mine;
  collectively(comm, [&] {
    if (comm.root()) mine = decompressed_text(path);
  });
  if (comm.root()) {
    const std::string text = std::move(mine);
    const std::size_t size = text.size();
    const auto cut = [&](int r) {
      const std::size_t position = share_start(size, r, comm.size());
      if (position == 0 || position >= size) return std::min(position, size);
      const std::size_t newline = text.find('\n', position - 1);
      return newline == std::string::npos ? size : newline + 1;
    };
    for (int r = 1; r < comm.size(); ++r) {
      const std::size_t begin = cut(r);
      const std::size_t end = r + 1 == comm.size() ? size : cut(r + 1);
      const auto length = static_cast<std::int64_t>(end - begin);
      comm.send(std::span<const std::int64_t>(&length, 1), r);
      comm.send(std::span<const char>(text.data() + begin, end - begin), r);
    }
    mine.assign(text, 0, comm.size() > 1 ? cut(1) : size);
  } else {
    std::int64_t length = 0;
    comm.receive(std::span<std::int64_t>(&length, 1), 0);
    mine.resize(static_cast<std::size_t>(length));
    comm.receive(std::span<char>(mine.data(), mine.size()), 0);
  }
  return mine;
}

}  // namespace detail

/// The samples of this rank's share of the LIBSVM file `path` (plain, .gz or .bz2), as the
/// serial `io::read_libsvm(path, options)` would read them (see the file comment): X with the
/// whole file's d, class indices of the whole file's label table. `options.threads` threads
/// parse the share. Collective. A malformed file throws `RankError` (kind parse) on every
/// rank with the serial reader's message; `options.labels` (a given label table) is refused.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_part(const Communicator& comm, const std::filesystem::path& path,
                                                      const io::LibsvmOptions& options = {},
                                                      PartOfFile* where = nullptr) {
  if (options.labels)
    throw std::invalid_argument("mpi::read_libsvm_part: LibsvmOptions::labels must be empty (the label table is "
                                "built from the whole file)");
  const std::string name = path.string();
  std::string text;
  collectively(comm, [&] {
    if (io::compression_of(path) == io::Compression::none) text = detail::plain_share(comm, path);
  });
  if (io::compression_of(path) != io::Compression::none) text = detail::compressed_share(comm, path);

  // Parse the share; an error's line counts the lines of the shares before it.
  const auto newlines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n'));
  const std::int64_t lines_before = comm.exclusive_sum(newlines);
  io::detail::LibsvmParser<Scalar, Index> parser(options, name);
  std::int64_t tail = 0;
  collectively(comm, [&] {
    try {
      tail = static_cast<std::int64_t>(io::detail::parse_text(parser, text, options, name));
    } catch (const io::ParseError& e) {
      throw io::ParseError(e.file(), e.line() + lines_before, e.column(), e.message());
    }
  });
  std::string().swap(text);

  // What the serial reader settles at the end of the input, over every part.
  const auto summary = parser.summary();
  const std::int64_t n_mine = parser.n_samples();
  std::int64_t n_samples = n_mine, lines = summary.lines;
  comm.sum(n_samples);
  comm.sum(lines);
  if (n_samples == 0) {  // the serial reader's position: the end of the input
    const std::int64_t last_tail = comm.max(tail);
    throw io::ParseError(name, lines + (last_tail > 0 ? 0 : 1), last_tail + 1,
                         io::detail::LibsvmParser<Scalar, Index>::no_samples_message);
  }
  const bool multilabel = options.label_format == io::LabelFormat::multilabel ||
                          (options.label_format == io::LabelFormat::detect && comm.max<std::int32_t>(summary.multilabel_sign));
  const std::vector<std::int64_t> missing_line =
      comm.all_gather(summary.missing_label_line > 0 ? summary.missing_label_line + lines_before : std::int64_t{0});
  const std::vector<std::int64_t> missing_column = comm.all_gather(summary.missing_label_column);
  for (std::size_t r = 0; r < missing_line.size() && !multilabel; ++r)
    if (missing_line[r] > 0)
      throw io::ParseError(name, missing_line[r], missing_column[r],
                           io::detail::LibsvmParser<Scalar, Index>::missing_label_message);
  if (n_samples > static_cast<std::int64_t>(std::numeric_limits<Index>::max()))
    throw std::invalid_argument(name + ": " + std::to_string(n_samples) + " samples overflow the " +
                                io::detail::index_bits<Index> + " index type");

  const std::vector<Label> mine = parser.distinct_labels();
  std::vector<Label> labels = comm.all_gather(std::span<const Label>(mine));
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  const std::int64_t d = options.n_features > 0 ? options.n_features : comm.max(summary.n_features);

  if (where != nullptr) *where = {comm.exclusive_sum(n_mine), n_samples};
  return parser.finish_part(LabelEncoder(std::move(labels)), static_cast<Index>(d), multilabel);
}

/// Every rank's part stacked in rank order, on every rank: with parts from
/// `read_libsvm_part`, the Dataset of the whole file (X, class sets, label table; weights are
/// not carried). Collective; needs the memory of the whole X on every rank.
template <RealScalar Scalar, StorageIndex Index>
[[nodiscard]] Dataset<Scalar, Index> gather_dataset(const Communicator& comm, const Dataset<Scalar, Index>& part) {
  const CsrView<Scalar, Index> X = part.csr();
  const LabelView y = part.labels().view();
  // Row lengths and label counts travel instead of offsets, which are rebuilt in place.
  std::vector<Index> row_nnz(static_cast<std::size_t>(X.rows()));
  std::vector<std::int64_t> label_count(static_cast<std::size_t>(X.rows()));
  for (std::size_t i = 0; i < row_nnz.size(); ++i) {
    row_nnz[i] = X.outer_ptr()[i + 1] - X.outer_ptr()[i];
    label_count[i] = y.offsets()[i + 1] - y.offsets()[i];
  }
  const std::vector<Index> lengths = comm.all_gather(std::span<const Index>(row_nnz));
  std::int64_t nnz = X.nnz();
  comm.sum(nnz);
  if (nnz > static_cast<std::int64_t>(std::numeric_limits<Index>::max()))
    throw std::invalid_argument("mpi::gather_dataset: " + std::to_string(nnz) + " entries overflow the " +
                                io::detail::index_bits<Index> + " index type; read with 64-bit indices");
  // The entries straight into the matrix's arrays.
  CsrMatrix<Scalar, Index> whole(static_cast<Index>(lengths.size()), X.cols());
  whole.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  comm.all_gather(X.inner_indices(), std::span<Index>(whole.innerIndexPtr(), static_cast<std::size_t>(nnz)));
  comm.all_gather(X.values(), std::span<Scalar>(whole.valuePtr(), static_cast<std::size_t>(nnz)));
  Index offset = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    whole.outerIndexPtr()[i] = offset;
    offset += lengths[i];
  }
  whole.outerIndexPtr()[lengths.size()] = offset;

  const std::vector<std::int64_t> counts = comm.all_gather(std::span<const std::int64_t>(label_count));
  const std::vector<ClassIndex> classes = comm.all_gather(y.classes());
  LabelSets sets(y.n_classes());
  std::size_t at = 0;
  for (const std::int64_t count : counts) {
    sets.push_back(std::span<const ClassIndex>(classes).subspan(at, static_cast<std::size_t>(count)));
    at += static_cast<std::size_t>(count);
  }
  return Dataset<Scalar, Index>(std::move(whole), std::move(sets), part.encoder());
}

}  // namespace sparsemc::mpi
