// libFuzzer harness: the staged model reader on arbitrary bytes (issue 17): a ParseError or a model.
#include <sparsemc/io/staged_model_io.hpp>

#include <cstdint>
#include <string_view>

using namespace sparsemc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  try {
    const auto model = io::parse_staged_model<double>(text, "fuzz");
    (void)model;
  } catch (const io::ParseError&) {
  }
  return 0;
}
