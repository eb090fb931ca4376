// Rows of a points CSV into training points: the bit statistics of A and B and their agreement,
// the three measured targets, and the experiment each row belongs to. Left out, each with its
// reason: SIMULATED rows (not a measurement), points whose GEMM produced non-finite values (their
// energy is not comparable with finite GEMMs: docs/report-gemm.md), and rows without statistics.
#include "gemm_model_points.h"

#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/csv_records.h"

namespace wattlab::cli {
namespace {

constexpr const char* kHint = "give the CSV `wattlab report --gemm --points` reads (docs/gemm-cli.md, \"Points as CSV\")";

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> c = {
      "label.engine", "label.M", "label.N", "label.K", "label.experiment", "label.recipe_a", "label.recipe_b",
      "count.energy_per_gemm_j", "count.mean_power_w", "count.mean_sm_clock_mhz", "count.input_ab_bit_agreement",
      "count.input_a_width_bits", "count.input_a_popcount_bits", "count.input_a_zero_fraction",
      "count.input_a_distinct_values", "count.input_a_hamming_k_bits", "count.input_a_hamming_mn_bits",
      "count.input_b_width_bits", "count.input_b_popcount_bits", "count.input_b_zero_fraction",
      "count.input_b_distinct_values", "count.input_b_hamming_k_bits", "count.input_b_hamming_mn_bits"};
  return c;
}

// A cell as a number: NaN when empty; nullopt when it is not a number.
std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nan("");
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<GemmModelPoints> read_gemm_model_points(const std::string& text, const std::string& source) {
  auto records = report::parse_csv(text, source);
  if (!records) return Error{ErrorKind::invalid_argument, records.error().what, kHint};
  if (records->empty()) return Error{ErrorKind::invalid_argument, source + ": empty, no header", kHint};
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < records->front().fields.size(); ++i) col[records->front().fields[i]] = i;
  for (const auto& c : required_columns())
    if (!col.count(c)) return Error{ErrorKind::invalid_argument, fmt::format("{}: no column '{}'", source, c), kHint};
  GemmModelPoints out;
  for (std::size_t r = 1; r < records->size(); ++r) {
    const auto& rec = (*records)[r];
    ++out.rows;
    if (rec.fields.size() != records->front().fields.size())
      return Error{ErrorKind::invalid_argument,
                   fmt::format("{}: line {}: {} fields, the header has {}", source, rec.line, rec.fields.size(),
                               records->front().fields.size()),
                   kHint};
    auto cell = [&](const std::string& c) -> std::string {
      const auto it = col.find(c);
      return it == col.end() ? std::string() : rec.fields[it->second];
    };
    std::optional<std::string> bad;
    auto num = [&](const std::string& c) {
      const auto v = number(cell(c));
      if (!v && !bad) bad = fmt::format("{}: line {}: column '{}' is '{}', not a number", source, rec.line, c, cell(c));
      return v.value_or(std::nan(""));
    };
    lab::GemmModelPoint p;
    p.engine = cell("label.engine");
    p.shape = fmt::format("{}x{}x{}", cell("label.M"), cell("label.N"), cell("label.K"));
    p.experiment = cell("label.experiment");
    const std::string param = cell("label.param"), value = cell("label.param_value");
    p.label = p.experiment + (param.empty() ? "" : " " + param + "=" + value);
    p.recipe_a = cell("label.recipe_a");
    p.recipe_b = cell("label.recipe_b");
    for (auto [x, prefix] : {std::pair{&p.stats.a, "count.input_a_"}, std::pair{&p.stats.b, "count.input_b_"}}) {
      const std::string pre = prefix;
      x->width_bits = num(pre + "width_bits");
      x->popcount_bits = num(pre + "popcount_bits");
      x->zero_fraction = num(pre + "zero_fraction");
      x->distinct_values = num(pre + "distinct_values");
      x->hamming_k_bits = num(pre + "hamming_k_bits");
      x->hamming_mn_bits = num(pre + "hamming_mn_bits");
    }
    p.stats.ab_bit_agreement = num("count.input_ab_bit_agreement");
    p.measured = {num("count.energy_per_gemm_j"), num("count.mean_power_w"), num("count.mean_sm_clock_mhz")};
    const double rel_nonfinite = num("count.rel_error_nonfinite");
    const double nonfinite = num("count.nonfinite_fraction");
    if (bad) return Error{ErrorKind::invalid_argument, *bad, kHint};
    const std::string where = fmt::format("line {} ({} {} {})", rec.line, p.engine, p.shape, p.label);
    if (cell("label.simulated") == "1" || cell("simulated") == "1")
      out.excluded.push_back(where + ": SIMULATED, not a measurement");
    else if (rel_nonfinite == 1 || nonfinite > 0)
      out.excluded.push_back(where + ": its GEMM output held Inf/NaN, so its energy is not comparable with finite GEMMs");
    else if (p.engine.empty() || p.experiment.empty())
      out.excluded.push_back(where + ": no engine or experiment label");
    else if (!std::isfinite(p.stats.a.width_bits) || !std::isfinite(p.stats.b.width_bits))
      out.excluded.push_back(where + ": no bit statistics of its operands");
    else
      out.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace wattlab::cli
