// libFuzzer harness: the native model reader (versions 1-3) on arbitrary bytes (issue 17).
// Accepted models must save and load back to the same text; anything else a ParseError.
#include <sparsemc/io/model_io.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace sparsemc;

template <class Scalar>
static void check(std::string_view text) {
  try {
    const auto model = io::parse_model<Scalar>(text, "fuzz");
    std::string saved;
    try {
      saved = io::format_model(model);
    } catch (const std::invalid_argument&) {
      return;  // provenance the writer refuses (e.g. a solver name with a line break cannot occur; a
               // float overflow when a double file is read as float): nothing to round-trip
    }
    if (io::format_model(io::parse_model<Scalar>(saved, "saved")) != saved) std::abort();
  } catch (const io::ParseError&) {
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  check<double>(text);
  check<float>(text);
  return 0;
}
