#include "report/gemm_points_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "report/csv_records.h"
#include "store/gemm_point_record.h"

namespace wattlab::report {
namespace {

constexpr std::string_view kLabel = "label.", kCount = "count.";

template <typename T>
std::optional<T> number(const std::string& s) {
  T v{};
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

// Python writes floats as repr(): "1e-07", "nan", "inf"; from_chars reads every one of them.
std::optional<double> real(const std::string& s) { return number<double>(s); }

}  // namespace

const std::vector<std::string>& gemm_points_csv_required_columns() {
  static const std::vector<std::string> cols = {
      "run_id",          "window_id",         "t_begin_ns",     "t_end_ns",        "final",        "label.kind",
      "label.experiment", "label.engine",     "label.M",        "label.N",         "label.K",      "label.recipe_a",
      "label.recipe_b",  "label.seed",        "label.param",    "label.param_value", "label.reference", "label.sweep",
      "label.point",     "label.simulated"};
  return cols;
}

Result<std::vector<RunRecord>> read_gemm_points_csv(std::string_view text, const std::string& source,
                                                    const std::string& domain_id) {
  auto records = parse_csv(text, source);
  if (!records) return records.error();
  const std::string hint = "give the CSV python/bench/gemm_points_csv.py writes (docs/gemm-cli.md, \"Points as CSV\")";
  if (records->empty()) return Error{ErrorKind::parse, source + ": empty, not even a header line", hint};
  const std::vector<std::string>& header = records->front().fields;
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i)
    if (!col.emplace(header[i], i).second)
      return Error{ErrorKind::parse, fmt::format("{} line 1: column '{}' appears twice", source, header[i]), hint};
  for (const auto& c : gemm_points_csv_required_columns())
    if (!col.count(c)) return Error{ErrorKind::parse, fmt::format("{}: no column '{}' in the header (line 1)", source, c), hint};
  auto opt_col = [&](const std::string& name) -> std::optional<std::size_t> {
    auto it = col.find(name);
    return it == col.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  };

  const std::set<std::string> required(gemm_points_csv_required_columns().begin(), gemm_points_csv_required_columns().end());
  std::map<RunId, RunRecord> runs;
  std::set<std::pair<RunId, WindowId>> seen;
  for (std::size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& rec = (*records)[r];
    auto bad = [&](const std::string& why) {
      return Error{ErrorKind::parse, fmt::format("{} line {}: {}", source, rec.line, why), hint};
    };
    if (rec.fields.size() != header.size())
      return bad(fmt::format("{} fields, the header has {}", rec.fields.size(), header.size()));
    auto cell = [&](const std::string& name) -> const std::string& { return rec.fields[col.at(name)]; };
    auto not_number = [&](const std::string& name) {
      return bad(fmt::format("column '{}': '{}' is not a number", name, cell(name)));
    };
    const auto run_id = number<int64_t>(cell("run_id"));
    if (!run_id || *run_id <= 0) return bad(fmt::format("column 'run_id': '{}' is not a positive run id", cell("run_id")));
    const auto window_id = number<uint64_t>(cell("window_id"));
    if (!window_id) return not_number("window_id");
    const auto t_begin = number<int64_t>(cell("t_begin_ns"));
    if (!t_begin) return not_number("t_begin_ns");
    const auto t_end = number<int64_t>(cell("t_end_ns"));
    if (!t_end) return not_number("t_end_ns");
    if (cell("final") != "0" && cell("final") != "1") return bad(fmt::format("column 'final': '{}' is not 0 or 1", cell("final")));
    if (!seen.emplace(*run_id, *window_id).second)
      return bad(fmt::format("run {} window {} appears twice", *run_id, *window_id));

    WindowResult w;
    w.id = *window_id;
    w.name = "gemm_point " + cell("label.point");
    w.t_begin_ns = *t_begin;
    w.t_end_ns = *t_end;
    w.final = cell("final") == "1";
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      const std::string& v = rec.fields[i];
      if (h.starts_with(kLabel)) {
        if (!v.empty() || required.count(h)) w.labels[h.substr(kLabel.size())] = v;  // empty: not this point's label
      } else if (h.starts_with(kCount) && !v.empty()) {
        const auto x = real(v);
        if (!x) return not_number(h);
        w.counts[h.substr(kCount.size())] = *x;
      }
    }
    if (w.labels["kind"] != "gemm_point")
      return bad(fmt::format("column 'label.kind': '{}', every row must be a gemm_point window", w.labels["kind"]));
    bool simulated = false;
    if (auto e = opt_col("energy_j"); e && !rec.fields[*e].empty()) {
      DomainEnergy d;
      d.domain_id = domain_id;
      auto num_col = [&](const char* name, double& out) -> std::optional<Error> {
        auto c = opt_col(name);
        if (!c || rec.fields[*c].empty()) return std::nullopt;
        const auto x = real(rec.fields[*c]);
        if (!x) return not_number(name);
        out = *x;
        return std::nullopt;
      };
      double available = 0, sim = 0, readings = 0;
      for (auto [name, out] : {std::pair<const char*, double*>{"energy_j", &d.energy_j}, {"uncertainty_j", &d.uncertainty_j},
                               {"systematic_j", &d.systematic_j}, {"mean_power_w", &d.mean_power_w},
                               {"peak_power_w", &d.peak_power_w}, {"available", &available}, {"simulated", &sim},
                               {"readings_used", &readings}})
        if (auto err = num_col(name, *out)) return *err;
      d.available = available != 0;
      d.simulated = sim != 0;
      d.readings_used = static_cast<std::size_t>(std::max(0.0, readings));
      simulated = d.simulated;
      w.domains.push_back(std::move(d));
    }
    if (auto rec_ok = GemmPointRecord::decode(w); !rec_ok) return bad(rec_ok.error().what);
    RunRecord& run = runs[*run_id];
    run.run_id = *run_id;
    run.info.simulated = run.info.simulated || simulated || w.labels["simulated"] == "1";
    run.windows.push_back(std::move(w));
  }
  std::vector<RunRecord> out;
  for (auto& [id, run] : runs) {
    run.window_count = static_cast<int64_t>(run.windows.size());
    out.push_back(std::move(run));
  }
  return out;
}

Result<std::vector<RunRecord>> load_gemm_points_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{ErrorKind::not_found, "cannot read the points CSV '" + path + "'",
                 "give the file python/bench/gemm_points_csv.py wrote (--out points.csv)"};
  std::ostringstream s;
  s << in.rdbuf();
  return read_gemm_points_csv(s.str(), path);
}

}  // namespace wattlab::report
