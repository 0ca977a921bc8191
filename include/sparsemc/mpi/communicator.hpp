#pragma once
/// \file communicator.hpp
/// The MPI layer of distributed sparsemc: a `Communicator` over an `MPI_Comm` with the few
/// collectives the distributed fits use (sums, maxima, gathers and broadcasts of any length,
/// sent in pieces below MPI's `int` counts), `Environment` (MPI_Init/MPI_Finalize as a scope),
/// and `collectively`, which makes an exception on some ranks an exception on every rank, so
/// that no rank waits forever in a collective its peers left.
///
/// Part of the optional CMake target `sparsemc::mpi` (found only when MPI is installed);
/// nothing else in sparsemc includes it.
///
/// \code
///   sparsemc::mpi::Environment mpi(argc, argv);
///   const sparsemc::mpi::Communicator world;               // MPI_COMM_WORLD
///   double objective = my_part();
///   world.sum(objective);                                  // every rank: the sum over the ranks
///   sparsemc::mpi::collectively(world, [&] { might_throw_on_one_rank(); });
/// \endcode

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../io/parse_error.hpp"

namespace sparsemc::mpi {

/// MPI_Init (with MPI_THREAD_FUNNELED: OpenMP threads inside a rank, MPI calls from the main
/// thread) for the lifetime of the object, unless MPI is already initialised; MPI_Finalize at
/// its end if it initialised.
class Environment {
 public:
  Environment(int& argc, char**& argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    owner_ = true;
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  ~Environment() {
    if (owner_) MPI_Finalize();
  }

 private:
  bool owner_ = false;
};

namespace detail {

/// The MPI datatype of T.
template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
  else static_assert(sizeof(T) == 0, "sparsemc::mpi: no MPI datatype for this element type");
}

/// Elements per message: MPI counts are `int`.
inline constexpr std::size_t max_message = std::size_t{1} << 30;

}  // namespace detail

/// A communicator (not owned: the caller's MPI_Comm, MPI_COMM_WORLD by default) with the
/// collectives of the distributed fits. Every member is collective: all ranks call it, in
/// the same order. Lengths are 64-bit; longer arrays go in pieces of 2³⁰ elements. Sums,
/// maxima and minima are the same bits on every rank (reduced on rank 0, then broadcast: an
/// MPI_Allreduce may add in a different order on different ranks), so that ranks that branch
/// on them branch alike. (A reduce-scatter and an all-gather, which would keep that and spare
/// rank 0, measured no faster on FISTA's d × K gradient at two ranks, docs/mpi.md.)
class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] bool root() const noexcept { return rank_ == 0; }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  /// Bytes this rank has contributed to sums, maxima and minima so far (the payload, not
  /// MPI's own traffic): the difference over a solve's iterations is its communication.
  [[nodiscard]] std::int64_t reduced_bytes() const noexcept { return reduced_bytes_; }

  /// values ← Σ over the ranks, in place (every rank gets the sums).
  template <class T>
  void sum(std::span<T> values) const {
    reduce(values, MPI_SUM);
  }
  template <class T>
  void sum(T& value) const {
    reduce(std::span<T>(&value, 1), MPI_SUM);
  }
  /// values ← the largest over the ranks, entry by entry, in place.
  template <class T>
  void max(std::span<T> values) const {
    reduce(values, MPI_MAX);
  }
  template <class T>
  [[nodiscard]] T max(T value) const {
    reduce(std::span<T>(&value, 1), MPI_MAX);
    return value;
  }
  template <class T>
  [[nodiscard]] T min(T value) const {
    reduce(std::span<T>(&value, 1), MPI_MIN);
    return value;
  }
  /// Σ over the ranks before this one (0 on rank 0).
  [[nodiscard]] std::int64_t exclusive_sum(std::int64_t value) const {
    std::int64_t before = 0;
    MPI_Exscan(&value, &before, 1, MPI_INT64_T, MPI_SUM, comm_);
    return rank_ == 0 ? 0 : before;
  }
  /// One value per rank, on every rank.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather(T value) const {
    std::vector<T> out(static_cast<std::size_t>(size_));
    MPI_Allgather(&value, 1, detail::datatype<T>(), out.data(), 1, detail::datatype<T>(), comm_);
    return out;
  }

  /// `values` of rank `from` to every rank (the others' are resized to it).
  template <class T>
  void broadcast(std::vector<T>& values, int from) const {
    auto length = static_cast<std::int64_t>(values.size());
    MPI_Bcast(&length, 1, MPI_INT64_T, from, comm_);
    values.resize(static_cast<std::size_t>(length));
    broadcast(std::span<T>(values), from);
  }
  /// `values` of rank `from` into every rank's `values` (of the same size).
  template <class T>
  void broadcast(std::span<T> values, int from) const {
    for (std::size_t at = 0; at < values.size(); at += detail::max_message) {
      const std::size_t count = std::min(detail::max_message, values.size() - at);
      MPI_Bcast(values.data() + at, static_cast<int>(count), detail::datatype<T>(), from, comm_);
    }
  }
  void broadcast(std::string& text, int from) const {
    std::vector<char> bytes(text.begin(), text.end());
    broadcast(bytes, from);
    text.assign(bytes.begin(), bytes.end());
  }

  /// Every rank's `part`, concatenated in rank order, on every rank.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather(std::span<const T> part) const {
    std::vector<T> out(static_cast<std::size_t>(total(all_gather(static_cast<std::int64_t>(part.size())))));
    all_gather(part, std::span<T>(out));
    return out;
  }
  /// The same into `out`, whose size is the sum of the parts' (storage the caller has, such as
  /// a matrix's arrays: no second copy).
  template <class T>
  void all_gather(std::span<const T> part, std::span<T> out) const {
    const std::vector<std::int64_t> lengths = all_gather(static_cast<std::int64_t>(part.size()));
    std::size_t at = 0;
    for (int r = 0; r < size_; ++r) {
      const std::span<T> slice = out.subspan(at, static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
      if (r == rank_) std::copy(part.begin(), part.end(), slice.begin());
      broadcast(slice, r);
      at += slice.size();
    }
  }

  /// Every rank's `part`, concatenated in rank order, on rank `to` (empty elsewhere).
  template <class T>
  [[nodiscard]] std::vector<T> gather(std::span<const T> part, int to) const {
    const std::vector<std::int64_t> lengths = all_gather(static_cast<std::int64_t>(part.size()));
    std::vector<T> out;
    if (rank_ != to) {
      send(part, to);
      return out;
    }
    out.resize(static_cast<std::size_t>(total(lengths)));
    std::size_t at = 0;
    for (int r = 0; r < size_; ++r) {
      const auto length = static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
      if (r == rank_) std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
      else receive(std::span<T>(out.data() + at, length), r);
      at += length;
    }
    return out;
  }

  /// Point to point, in pieces: the receiver knows the length.
  template <class T>
  void send(std::span<const T> values, int to) const {
    for (std::size_t at = 0; at < values.size(); at += detail::max_message) {
      const std::size_t count = std::min(detail::max_message, values.size() - at);
      MPI_Send(values.data() + at, static_cast<int>(count), detail::datatype<T>(), to, 0, comm_);
    }
  }
  template <class T>
  void receive(std::span<T> values, int from) const {
    for (std::size_t at = 0; at < values.size(); at += detail::max_message) {
      const std::size_t count = std::min(detail::max_message, values.size() - at);
      MPI_Recv(values.data() + at, static_cast<int>(count), detail::datatype<T>(), from, 0, comm_, MPI_STATUS_IGNORE);
    }
  }

 private:
  template <class T>
  void reduce(std::span<T> values, MPI_Op op) const {
    for (std::size_t at = 0; at < values.size(); at += detail::max_message) {
      const std::size_t count = std::min(detail::max_message, values.size() - at);
      T* data = values.data() + at;
      MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : data, rank_ == 0 ? data : nullptr, static_cast<int>(count),
                 detail::datatype<T>(), op, 0, comm_);
      MPI_Bcast(data, static_cast<int>(count), detail::datatype<T>(), 0, comm_);
    }
    reduced_bytes_ += static_cast<std::int64_t>(values.size() * sizeof(T));
  }
  static std::int64_t total(const std::vector<std::int64_t>& lengths) {
    std::int64_t sum = 0;
    for (const std::int64_t length : lengths) sum += length;
    return sum;
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  mutable std::int64_t reduced_bytes_ = 0;
};

/// The exception every rank throws when a step run `collectively` failed on some rank: the
/// failure of the lowest such rank, its message and kind.
class RankError : public std::runtime_error {
 public:
  enum class Kind : std::int64_t { parse = 0, invalid_argument = 1, out_of_memory = 2, other = 3 };
  RankError(int rank, Kind kind, const std::string& what) : std::runtime_error(what), rank_(rank), kind_(kind) {}
  /// The rank whose failure this is.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// What failed: a malformed input (an io::ParseError), a bad argument, memory, or else.
  [[nodiscard]] Kind kind() const noexcept { return kind_; }

 private:
  int rank_;
  Kind kind_;
};

/// Runs `step()` on every rank, then agrees on the outcome: if it threw on any rank, every
/// rank throws the `RankError` of the lowest failing rank (its message as `what()`, which for
/// a malformed input is the reader's `file:line:column: what`). Collective; a step that
/// itself calls collectives must not throw between them on some ranks only.
template <class Step>
void collectively(const Communicator& comm, Step&& step) {
  RankError::Kind kind = RankError::Kind::other;
  std::string message;
  bool failed = true;
  try {
    step();
    failed = false;
  } catch (const io::ParseError& e) {
    kind = RankError::Kind::parse, message = e.what();
  } catch (const std::invalid_argument& e) {
    kind = RankError::Kind::invalid_argument, message = e.what();
  } catch (const std::bad_alloc&) {
    kind = RankError::Kind::out_of_memory, message = "out of memory on rank " + std::to_string(comm.rank());
  } catch (const std::exception& e) {
    message = e.what();
  }
  const int first = comm.min(failed ? comm.rank() : std::numeric_limits<int>::max());
  if (first == std::numeric_limits<int>::max()) return;
  std::vector<std::int64_t> code{static_cast<std::int64_t>(kind)};
  comm.broadcast(code, first);
  comm.broadcast(message, first);
  throw RankError(first, static_cast<RankError::Kind>(code.front()), message);
}

}  // namespace sparsemc::mpi
