// libFuzzer harness: the gzip and bzip2 LIBSVM readers on arbitrary bytes (issue 17). Input
// starting with "BZh" is read as .bz2, anything else as .gz, through a file in /dev/shm (the
// readers take paths). Errors must be ParseError or runtime_error naming the file.
#include <sparsemc/io/libsvm.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

using namespace sparsemc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const bool bz2 = size >= 3 && bytes[0] == 'B' && bytes[1] == 'Z' && bytes[2] == 'h';
  static const std::string dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  const std::string path = dir + "/sparsemc-fuzz-" + std::to_string(::getpid()) + (bz2 ? ".svm.bz2" : ".svm.gz");
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 0) std::fwrite(bytes, 1, size, file);
  std::fclose(file);
  try {
    (void)io::read_libsvm<double>(path);
  } catch (const io::ParseError&) {
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind(path + ":", 0) != 0) std::abort();  // every I/O error names the file
  }
  std::remove(path.c_str());
  return 0;
}
