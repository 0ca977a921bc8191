#pragma once
/// \file compressed.hpp
/// Reads gzip (.gz, through zlib) and bzip2 (.bz2, through libbz2) compressed LIBSVM files
/// directly: the decompressed bytes flow block by block into the same parser as plain
/// files, so a compressed file is never expanded in memory or on disk. Compressed data held
/// in memory or arriving on a stream is read the same way from an `std::istream`.
///
/// This header needs the CMake target `sparsemc::io` (it links ZLIB and BZip2 and defines
/// `SPARSEMC_HAVE_ZLIB` / `SPARSEMC_HAVE_BZIP2`); the core `sparsemc::sparsemc` stays
/// Eigen-only. Usually include `io/libsvm.hpp`, whose `read_libsvm(path)` picks the reader
/// by file extension. Concatenated gzip members and concatenated bzip2 streams (as written
/// by pigz / pbzip2) are read in full; bytes after the last member or stream that do not
/// start another one are an error (they would be silently dropped data). Corrupt or
/// truncated compressed data throws `std::runtime_error` naming the file.
///
/// \code
///   // CMake: target_link_libraries(app PRIVATE sparsemc::io)
///   #include <sparsemc/io/compressed.hpp>
///   auto sector = sparsemc::io::read_libsvm_bzip2<double>("sector.scale.bz2");
///   auto news = sparsemc::io::read_libsvm_gzip<float>("news20.gz", {.n_features = 62061});
///   std::istringstream bytes(gzip_bytes);  // e.g. a .gz file received over the network
///   auto data = sparsemc::io::read_libsvm_gzip<double>(bytes, {}, "upload.gz");
/// \endcode

#if !defined(SPARSEMC_HAVE_ZLIB) && !defined(SPARSEMC_HAVE_BZIP2)
#error "sparsemc/io/compressed.hpp needs zlib or libbz2: link the CMake target sparsemc::io"
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <new>
#include <cstdio>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifdef SPARSEMC_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef SPARSEMC_HAVE_BZIP2
#include <bzlib.h>
#endif

#include "libsvm_reader.hpp"

namespace sparsemc::io {
namespace detail {

/// Largest chunk of compressed input handed to a decoder at once (bytes).
inline constexpr std::size_t compressed_chunk = std::size_t{1} << 20;

/// The compressed bytes of a gzip or bzip2 input, chunk by chunk, from a byte source `Input`
/// (`FileSource`, `StreamSource`, or any type with `read` and `size` as `read_blocks` takes
/// them: `read` returns 0 at the end, and only then). An input of known size smaller than a
/// chunk gets a buffer of its own size; one of unknown size (a stream) is read in chunks of
/// `first_block_size`, which zlib and libbz2 decode as fast as larger ones. The buffer is not
/// zero-filled.
template <class Input>
class CompressedInput {
 public:
  explicit CompressedInput(Input& input)
      : input_(input),
        size_(std::min(compressed_chunk, input.size() ? *input.size() + 1 : first_block_size)),  // +1: the read that finds the end
        buffer_(std::make_unique_for_overwrite<char[]>(size_)) {}

  /// Reads the next chunk into `data()` (the previous one must be consumed) and returns its
  /// size; 0 means the end of the input, after which `at_end()` is true.
  unsigned refill() {
    const std::size_t got = input_.read(buffer_.get(), size_);
    if (got == 0) at_end_ = true;
    return static_cast<unsigned>(got);  // <= compressed_chunk
  }
  [[nodiscard]] char* data() const { return buffer_.get(); }
  [[nodiscard]] bool at_end() const { return at_end_; }

 private:
  Input& input_;
  std::size_t size_;
  std::unique_ptr<char[]> buffer_;
  bool at_end_ = false;
};

#ifdef SPARSEMC_HAVE_ZLIB
/// gzip data as a byte source (zlib's inflate over the compressed bytes of `Input`, see
/// `CompressedInput`; `name` names them in errors). Concatenated members (pigz,
/// `cat a.gz b.gz`) are all read; anything after a member that is not another member — text
/// appended to the file, a cut second header — is an error, not silently dropped data.
template <class Input>
class GzipSource {
 public:
  GzipSource(Input& input, std::string name) : name_(std::move(name)), input_(input) {}
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;
  ~GzipSource() {
    if (in_member_) inflateEnd(&stream_);
  }

  /// The decompressed size is not known in advance.
  std::optional<std::size_t> size() const { return std::nullopt; }

  /// Fills `dst` with up to `capacity` decompressed bytes; 0 means the end of the data.
  /// Loop invariant: `in_member_` says whether a gzip member is open; input runs out either
  /// between members (the end) or inside one (truncated data, an error).
  std::size_t read(char* dst, std::size_t capacity) {
    capacity = std::min<std::size_t>(capacity, UINT_MAX);  // zlib counts in unsigned int
    stream_.next_out = reinterpret_cast<Bytef*>(dst);
    stream_.avail_out = static_cast<unsigned>(capacity);
    while (stream_.avail_out > 0) {
      if (stream_.avail_in == 0 && !input_.at_end()) refill();
      if (!in_member_) {
        if (stream_.avail_in == 0) {
          if (members_ == 0) throw std::runtime_error(name_ + ": empty file, not gzip data");
          break;  // the data ends between members: done
        }
        start_member();
      }
      const unsigned in_before = stream_.avail_in;
      const unsigned out_before = stream_.avail_out;
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {  // another member may follow
        inflateEnd(&stream_);
        in_member_ = false;
        ++members_;
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        throw std::runtime_error(name_ + ": " + (members_ > 0 ? "trailing bytes after the gzip data (" : "corrupt gzip data (") +
                                 (stream_.msg ? stream_.msg : "data error") + ")");
      } else if (rc == Z_MEM_ERROR) {
        throw std::bad_alloc();
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw std::runtime_error(name_ + ": corrupt gzip data (zlib error " + std::to_string(rc) + ")");
      } else if (input_.at_end() && in_before == 0 && stream_.avail_out == out_before) {
        throw std::runtime_error(name_ + (members_ > 0 ? ": trailing bytes after the gzip data (a cut member)"
                                                        : ": truncated gzip data"));
      }
    }
    return capacity - stream_.avail_out;
  }

 private:
  /// Hands the next chunk of compressed input to zlib.
  void refill() {
    stream_.avail_in = input_.refill();
    stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
  }

  /// Starts a member at the current input position: gzip only (windowBits 16 + 15), so bytes
  /// that are not a gzip header are a data error rather than raw text passed through.
  void start_member() {
    z_stream fresh{};
    fresh.next_in = stream_.next_in;
    fresh.avail_in = stream_.avail_in;
    fresh.next_out = stream_.next_out;
    fresh.avail_out = stream_.avail_out;
    stream_ = fresh;
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK)
      throw std::runtime_error(name_ + ": cannot start gzip decompression (out of memory)");
    in_member_ = true;
  }

  std::string name_;
  CompressedInput<Input> input_;  // the compressed bytes, consumed by stream_
  z_stream stream_{};             // zlib's decoder state and its input/output cursors
  bool in_member_ = false;
  std::int64_t members_ = 0;  // complete members read
};
#endif

#ifdef SPARSEMC_HAVE_BZIP2
/// bzip2 data as a byte source (libbz2's stream API over the compressed bytes of `Input`,
/// see `CompressedInput`, so that concatenated streams are all read; `name` names them in
/// errors).
template <class Input>
class Bzip2Source {
 public:
  Bzip2Source(Input& input, std::string name) : name_(std::move(name)), input_(input) {}
  Bzip2Source(const Bzip2Source&) = delete;
  Bzip2Source& operator=(const Bzip2Source&) = delete;
  ~Bzip2Source() {
    if (in_stream_) BZ2_bzDecompressEnd(&stream_);
  }

  /// The decompressed size is not known in advance.
  std::optional<std::size_t> size() const { return std::nullopt; }

  /// Fills `dst` with up to `capacity` decompressed bytes; 0 means the end of the data.
  /// Loop invariant: `in_stream_` says whether a bzip2 stream is open; input runs out
  /// either between streams (the end) or inside one (truncated data, an error).
  std::size_t read(char* dst, std::size_t capacity) {
    capacity = std::min<std::size_t>(capacity, UINT_MAX);  // libbz2 counts in unsigned int
    stream_.next_out = dst;
    stream_.avail_out = static_cast<unsigned>(capacity);
    while (stream_.avail_out > 0) {
      if (stream_.avail_in == 0 && !input_.at_end()) refill();
      if (!in_stream_) {
        if (stream_.avail_in == 0) break;  // the data ends between streams: done
        start_stream();
      }
      const unsigned in_before = stream_.avail_in;
      const unsigned out_before = stream_.avail_out;
      const int rc = BZ2_bzDecompress(&stream_);
      if (rc == BZ_STREAM_END) {  // another stream may follow
        BZ2_bzDecompressEnd(&stream_);
        in_stream_ = false;
        ++streams_;
      } else if (rc != BZ_OK) {
        throw std::runtime_error(name_ + (streams_ > 0 && rc == BZ_DATA_ERROR_MAGIC
                                              ? std::string(": trailing bytes after the bzip2 data")
                                              : ": corrupt bzip2 data (libbz2 error " + std::to_string(rc) + ")"));
      } else if (input_.at_end() && in_before == 0 && stream_.avail_out == out_before) {
        throw std::runtime_error(name_ + (streams_ > 0 ? ": trailing bytes after the bzip2 data (a cut stream)"
                                                        : ": truncated bzip2 data"));
      }
    }
    return capacity - stream_.avail_out;
  }

 private:
  /// Hands the next chunk of compressed input to libbz2.
  void refill() {
    stream_.avail_in = input_.refill();
    stream_.next_in = input_.data();
  }

  /// Starts decoding a stream at the current input position (libbz2 needs a fresh state
  /// per stream; the input and output cursors carry over).
  void start_stream() {
    bz_stream fresh{};
    fresh.next_in = stream_.next_in;
    fresh.avail_in = stream_.avail_in;
    fresh.next_out = stream_.next_out;
    fresh.avail_out = stream_.avail_out;
    stream_ = fresh;
    if (BZ2_bzDecompressInit(&stream_, 0, 0) != BZ_OK)
      throw std::runtime_error(name_ + ": cannot start bzip2 decompression (out of memory)");
    in_stream_ = true;
  }

  std::string name_;
  CompressedInput<Input> input_;  // the compressed bytes, consumed by stream_
  bz_stream stream_{};            // libbz2's decoder state and its input/output cursors
  bool in_stream_ = false;
  std::int64_t streams_ = 0;  // complete streams read
};
#endif

}  // namespace detail

#ifdef SPARSEMC_HAVE_ZLIB
/// Reads a gzip-compressed LIBSVM file (see `read_libsvm` for the grammar and options).
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_gzip(const std::filesystem::path& path,
                                                      const LibsvmOptions& options = {}) {
  detail::FileSource file(path);
  detail::GzipSource source(file, path.string());
  return detail::read_blocks<Scalar, Index>(source, options, path.string());
}

/// Reads gzip-compressed LIBSVM data from a stream (opened in binary mode, or any stream of
/// the bytes, e.g. an `std::istringstream` of a .gz file held in memory). `name` is the file
/// name used in error messages.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_gzip(std::istream& in, const LibsvmOptions& options = {},
                                                      const std::string& name = "<stream>") {
  detail::StreamSource bytes(in, name);
  detail::GzipSource source(bytes, name);
  return detail::read_blocks<Scalar, Index>(source, options, name);
}
#endif

#ifdef SPARSEMC_HAVE_BZIP2
/// Reads a bzip2-compressed LIBSVM file (see `read_libsvm` for the grammar and options).
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_bzip2(const std::filesystem::path& path,
                                                       const LibsvmOptions& options = {}) {
  detail::FileSource file(path);
  detail::Bzip2Source source(file, path.string());
  return detail::read_blocks<Scalar, Index>(source, options, path.string());
}

/// Reads bzip2-compressed LIBSVM data from a stream (see the stream `read_libsvm_gzip`).
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
[[nodiscard]] Dataset<Scalar, Index> read_libsvm_bzip2(std::istream& in, const LibsvmOptions& options = {},
                                                       const std::string& name = "<stream>") {
  detail::StreamSource bytes(in, name);
  detail::Bzip2Source source(bytes, name);
  return detail::read_blocks<Scalar, Index>(source, options, name);
}
#endif

}  // namespace sparsemc::io
