// Fuzzes the ML.ENERGY leaderboard JSON reader (src/diagnose/json_reader.cpp, row_parser.cpp): a
// task file either gives a Dataset whose rows re-emit as JSON, or a UsageError (exit 2 in the
// CLI) naming the problem; any other exception escapes and libFuzzer reports it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "wattlab/core/error.h"
#include "diagnose/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto d = wattlab::diagnose::parse_leaderboard_json(text, "fuzz.json");
    for (const auto& r : d.rows) {
      check(r.energy_per_unit_j() > 0, "a row's energy per unit is > 0: " + r.where());
      (void)wattlab::diagnose::record_to_json(r);
      (void)r.label();
    }
  } catch (const wattlab::UsageError& e) {
    check(std::string_view(e.what()).rfind("fuzz.json", 0) == 0, std::string("the error names the file: ") + e.what());
  }
  return 0;
}
