// Fuzzes the GEMM model file reader (src/lab/gemm_model_io.cpp, docs/gemm-model.md): a bad file is
// a `parse` error naming the source; a model that reads writes back to text that reads to the same
// text, and predicts a finite value with a finite interval from finite statistics.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lab/gemm_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  using namespace wattlab::lab;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = gemm_model_from_json(text, "fuzz.json");
  if (!m) {
    check(m.error().kind == wattlab::ErrorKind::parse, "a bad model file must be a parse error");
    check(m.error().what.rfind("fuzz.json", 0) == 0, "the error must name the file: " + m.error().what);
    return 0;
  }
  const std::string once = gemm_model_to_json(*m);
  auto again = gemm_model_from_json(once, "again");
  check(again.ok(), "a model that read must read again after writing: " + (again ? "" : again.error().what));
  check(gemm_model_to_json(*again) == once, "writing a model read back must give the same text");
  GemmBitStats s;
  s.a = s.b = {16, 6.7, 0.1, 5000, 5.9, 5.9};
  s.ab_bit_agreement = 0.63;
  for (const auto& f : m->fits)
    for (const auto& t : f.targets) {
      const auto p = predict_gemm_target(t, s);
      check(!std::isfinite(p.value) || p.low <= p.value, "the interval's low end must not pass the prediction");
      check(!std::isfinite(p.value) || p.high >= p.value, "the interval's high end must not fall below the prediction");
    }
  return 0;
}
