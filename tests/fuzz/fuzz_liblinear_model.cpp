// libFuzzer harness: the LIBLINEAR model reader on arbitrary bytes (issue 17): a ParseError or
// a model, which then exports without crashing.
#include <sparsemc/io/liblinear_model.hpp>

#include <cstdint>
#include <string_view>

using namespace sparsemc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  try {
    const auto model = io::parse_liblinear_model<double>(text, "fuzz");
    try {
      (void)io::format_liblinear_model(model);
    } catch (const std::invalid_argument&) {
    }
  } catch (const io::ParseError&) {
  }
  return 0;
}
