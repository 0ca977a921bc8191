#pragma once
/// \file atomic_file.hpp
/// Writing an output file so that a failure cannot destroy what was there before: the bytes
/// go to a temporary file in the target's directory (`.NAME.tmp-XXXXXX`, created with
/// mkstemp), which is flushed and fsync'ed and then renamed over the target. rename(2) within
/// one file system is atomic: a reader sees the old file or the complete new one, never a
/// cut-off mix. On any failure (a full disk, a write error, an exception from the producer)
/// the temporary is removed and the old file is left as it was.
///
/// Every sparsemc writer of a named file (native, staged and LIBLINEAR models, LIBSVM data,
/// the tools' prediction files) goes through `write_file_atomically`. Errors are
/// `std::runtime_error` whose message starts with the target's path.
///
/// POSIX only (mkstemp, fsync, rename); the permissions of a new file are those of a file
/// created by `open(..., 0666)` under the process umask, and a replaced file keeps its mode.
///
/// \code
///   #include <sparsemc/io/atomic_file.hpp>
///   sparsemc::io::write_file_atomically("out.txt", [](std::ostream& out) { out << "hello\n"; });
///   sparsemc::io::check_writable("dir/model.txt");   // before a long run: fails early, names the file
/// \endcode

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sparsemc::io {
namespace detail {

/// "path: what (strerror)" as a runtime_error.
[[noreturn]] inline void throw_file_error(const std::filesystem::path& path, std::string_view what, int error) {
  throw std::runtime_error(path.string() + ": " + std::string(what) +
                           (error != 0 ? " (" + std::generic_category().message(error) + ")" : std::string()));
}

/// The directory a file is created in ("." for a bare name).
inline std::filesystem::path directory_of(const std::filesystem::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

/// A file descriptor closed on scope exit, with the temporary's name removed unless kept.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::filesystem::path& target) : target_(target) {
    std::string hidden = target.filename().string();
    hidden.insert(hidden.begin(), '.');
    hidden += ".tmp-XXXXXX";
    std::string pattern = (directory_of(target) / hidden).string();
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) throw_file_error(target, "cannot create a temporary file in its directory", errno);
    name_ = std::move(pattern);
    // mkstemp creates 0600; give the file the mode a plain create would (0666 & ~umask), or
    // the mode of the file it replaces.
    struct stat old {};
    mode_t mode = 0;
    if (::stat(target.c_str(), &old) == 0) {
      mode = old.st_mode & 07777;
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd_, mode);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }

  /// Writes all of [data, data + size); a short write (disk full) is an error naming the target.
  void write(const char* data, std::size_t size) {
    while (size > 0) {
      const ::ssize_t done = ::write(fd_, data, size);
      if (done < 0) {
        if (errno == EINTR) continue;
        throw_file_error(target_, "write error", errno);
      }
      data += done;
      size -= static_cast<std::size_t>(done);
    }
  }

  /// fsync, close, rename over the target; afterwards the temporary no longer exists.
  void commit() {
    if (::fsync(fd_) != 0) throw_file_error(target_, "write error (fsync)", errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw_file_error(target_, "write error (close)", errno);
    if (std::rename(name_.c_str(), target_.c_str()) != 0) throw_file_error(target_, "cannot replace the file", errno);
    name_.clear();
    // Make the rename itself durable (best effort: some file systems refuse fsync on a directory).
    const int dir = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }

 private:
  std::filesystem::path target_;
  std::string name_;
  int fd_ = -1;
};

/// A std::streambuf that buffers and hands full buffers to a TemporaryFile.
class TemporaryFileBuf : public std::streambuf {
 public:
  explicit TemporaryFileBuf(TemporaryFile& file) : file_(file), buffer_(std::size_t{1} << 16, '\0') {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  /// Writes what is buffered (errors propagate as exceptions, not as a bad stream state).
  void drain() {
    file_.write(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }

 protected:
  int_type overflow(int_type c) override {
    drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(buffer_.size())) {
      drain();
      file_.write(s, static_cast<std::size_t>(n));
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override {
    drain();
    return 0;
  }

 private:
  TemporaryFile& file_;
  std::string buffer_;
};

}  // namespace detail

/// Fails early, naming the file, when `path` could not be written: its directory does not
/// exist or is not writable, or the path is a directory. Meant for tools to call before a
/// long computation whose result goes to `path` (the write itself stays atomic).
inline void check_writable(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) detail::throw_file_error(path, "is a directory", 0);
  const auto dir = detail::directory_of(path);
  if (!std::filesystem::is_directory(dir, ec))
    detail::throw_file_error(path, "cannot be written: directory '" + dir.string() + "' does not exist", 0);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    detail::throw_file_error(path, "cannot be written: directory '" + dir.string() + "' is not writable", errno);
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0 && errno != ENOENT)
    detail::throw_file_error(path, "cannot be written", errno);
}

/// Writes a file atomically: `produce(std::ostream&)` writes the content into a temporary
/// file next to `path`, which then replaces `path` (see the file comment). If `produce`
/// throws, or writing fails, `path` keeps its old content and the exception propagates
/// (I/O failures as std::runtime_error naming `path`).
template <class Producer>
void write_file_atomically(const std::filesystem::path& path, Producer&& produce) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) detail::throw_file_error(path, "cannot write: is a directory", 0);
  detail::TemporaryFile file(path);
  {
    detail::TemporaryFileBuf buffer(file);
    std::ostream out(&buffer);
    out.exceptions(std::ios::badbit);
    try {
      std::forward<Producer>(produce)(out);
      out.flush();
    } catch (const std::ios_base::failure&) {
      // The stream wraps what the buffer threw; rethrow an error naming the file.
      detail::throw_file_error(path, "write error", errno);
    }
    buffer.drain();
  }
  file.commit();
}

/// Writes `text` to `path` atomically.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, [text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

}  // namespace sparsemc::io
