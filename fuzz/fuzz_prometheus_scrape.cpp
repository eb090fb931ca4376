// Fuzzes the Prometheus text parser of the inference bench's server scrape
// (src/infer/metrics_scrape.cpp): whatever the server sends, each wanted metric comes out as a
// finite number or not at all, and lines that do not parse change nothing.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "infer/metrics_scrape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  namespace infer = wattlab::infer;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names = infer::vllm_metric_names();
  names.push_back("m");  // a short name the fuzzer reaches easily
  const auto values = infer::parse_prometheus_text(text, names);
  for (const auto& [name, v] : values) {
    check(std::isfinite(v), "metric '" + name + "' is " + std::to_string(v));
    bool wanted = false;
    for (const auto& n : names) wanted = wanted || n == name;
    check(wanted, "metric '" + name + "' was not asked for");
  }
  // A comment line and a line of garbage after the text add nothing.
  const std::string padded = std::string(text) + "\n# HELP m x\n}{ \n";
  check(infer::parse_prometheus_text(padded, names) == values, "a comment or garbage line changed the values");
  const auto sample = infer::sample_from(values, 0);
  const auto means = infer::mean_over({sample}, 0, 0);
  check(means.samples == 1, "the one sample lies in its own window");
  return 0;
}
