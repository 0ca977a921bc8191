// libFuzzer harness: the LIBSVM reader on arbitrary bytes (issue 17). Accepted input must
// round-trip through the writer bit for bit; anything else must be a ParseError.
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/io/libsvm_writer.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

using namespace sparsemc;

template <class Scalar, class Index>
static void round_trip(const Dataset<Scalar, Index>& data, bool zero_based) {
  std::ostringstream out;
  io::write_libsvm(out, data, {.zero_based = zero_based});
  const auto back = io::parse_libsvm<Scalar, Index>(
      out.str(), {.n_features = data.n_features(), .zero_based = zero_based,
                  .label_format = data.multilabel() ? io::LabelFormat::multilabel : io::LabelFormat::detect,
                  .labels = data.encoder()});
  const auto A = data.csr(), B = back.csr();
  if (A.rows() != B.rows() || A.cols() != B.cols() || A.values().size() != B.values().size() ||
      (A.values().size() > 0 && std::memcmp(A.values().data(), B.values().data(), A.values().size_bytes()) != 0) ||
      !std::equal(A.inner_indices().begin(), A.inner_indices().end(), B.inner_indices().begin()) ||
      !std::equal(A.outer_ptr().begin(), A.outer_ptr().end(), B.outer_ptr().begin()))
    std::abort();
  const auto ya = data.labels().view(), yb = back.labels().view();
  if (!std::equal(ya.classes().begin(), ya.classes().end(), yb.classes().begin(), yb.classes().end())) std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the options; the rest is the file.
  const std::uint8_t mode = bytes[0];
  const std::string_view text(reinterpret_cast<const char*>(bytes + 1), size - 1);
  io::LibsvmOptions options;
  options.zero_based = mode & 1;
  if (mode & 2) options.label_format = io::LabelFormat::multilabel;
  if (mode & 4) options.n_features = 1 + (mode >> 4);
  try {
    if (mode & 8) {
      round_trip(io::parse_libsvm<float, std::int64_t>(text, options, "fuzz"), options.zero_based);
    } else {
      round_trip(io::parse_libsvm<double, std::int32_t>(text, options, "fuzz"), options.zero_based);
    }
  } catch (const io::ParseError&) {
  }
  return 0;
}
