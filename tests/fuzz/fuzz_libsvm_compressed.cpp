// libFuzzer harness: the gzip and bzip2 LIBSVM readers on arbitrary bytes (issue 17). Input
// starting with "BZh" is read as bzip2, anything else as gzip, from a stream over the bytes
// (the decoders and the parser of the file readers, without a file per input). Errors must be
// ParseError or runtime_error naming the input.
#include <sparsemc/io/libsvm.hpp>

#include <cstdint>
#include <cstdlib>
#include <istream>
#include <streambuf>
#include <string>

using namespace sparsemc;

namespace {

/// The fuzzer's bytes as a read-only stream buffer (no copy).
class ByteBuffer : public std::streambuf {
 public:
  ByteBuffer(const std::uint8_t* bytes, std::size_t size) {
    char* begin = const_cast<char*>(reinterpret_cast<const char*>(bytes));  // never written: no put area
    setg(begin, begin, begin + size);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const bool bz2 = size >= 3 && bytes[0] == 'B' && bytes[1] == 'Z' && bytes[2] == 'h';
  const std::string name = bz2 ? "fuzz.svm.bz2" : "fuzz.svm.gz";
  ByteBuffer buffer(bytes, size);
  std::istream in(&buffer);
  try {
    if (bz2) {
      (void)io::read_libsvm_bzip2<double>(in, {}, name);
    } else {
      (void)io::read_libsvm_gzip<double>(in, {}, name);
    }
  } catch (const io::ParseError&) {
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind(name + ":", 0) != 0) std::abort();  // every I/O error names the input
  }
  return 0;
}
