#include "store/characterize_record.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "record_fields.h"

namespace wattlab {
namespace {

constexpr std::string_view kIdlePrefix = "characterize:idle ";
constexpr std::string_view kReadingPrefix = "characterize:reading ";
constexpr std::string_view kLoadPrefix = "characterize:load ";
constexpr const char* kDomain = "domain";
constexpr const char* kReading = "reading";
constexpr const char* kYes = "yes";
constexpr const char* kNo = "no";
constexpr Estimator kCounterEstimator = Estimator::counter;
constexpr Estimator kCrossCheckEstimator = Estimator::integrated_power_instant_w;
// The agreement counts of one reading: "<reading>.ratio", ...
constexpr std::string_view kRatio = ".ratio", kDiffPct = ".diff_pct", kUncertaintyPct = ".uncertainty_pct";

using ReadingNumber = std::optional<double> CharacterizeReadingRecord::*;
constexpr std::array<std::pair<const char*, ReadingNumber>, 9> kReadingNumbers{{
    {"read_cost_median_us", &CharacterizeReadingRecord::read_cost_median_us},
    {"read_cost_p99_us", &CharacterizeReadingRecord::read_cost_p99_us},
    {"update_period_median_ms", &CharacterizeReadingRecord::update_period_median_ms},
    {"update_period_p10_ms", &CharacterizeReadingRecord::update_period_p10_ms},
    {"update_period_p90_ms", &CharacterizeReadingRecord::update_period_p90_ms},
    {"sample_spacing_median_ms", &CharacterizeReadingRecord::sample_spacing_median_ms},
    {"sample_spacing_p10_ms", &CharacterizeReadingRecord::sample_spacing_p10_ms},
    {"sample_spacing_p90_ms", &CharacterizeReadingRecord::sample_spacing_p90_ms},
    {"buffer_depth_samples", &CharacterizeReadingRecord::buffer_depth_samples},
}};

WindowResult window(WindowId id, std::string name, int64_t t_begin_ns, int64_t t_end_ns) {
  WindowResult w;
  w.id = id;
  w.name = std::move(name);
  w.t_begin_ns = t_begin_ns;
  w.t_end_ns = t_end_ns;
  w.final = true;
  return w;
}

// The window's name must start with `prefix`; the reader for its labels and counts.
Result<store_detail::FieldReader> reader_for(const WindowResult& w, std::string_view prefix) {
  if (!w.name.starts_with(prefix))
    return Error{ErrorKind::parse, fmt::format("window '{}' is not a '{}...' window", w.name, prefix), ""};
  return store_detail::FieldReader(w.labels, w.counts, fmt::format("window '{}'", w.name));
}

ReadingKind reading_of(store_detail::FieldReader& f, std::string& error) {
  const std::string text = f.text(kReading);
  if (f.failed()) return ReadingKind::power_instant_w;
  if (auto k = reading_kind_from_string(text)) return *k;
  error = fmt::format("label '{}' = '{}' is not a reading kind", kReading, text);
  return ReadingKind::power_instant_w;
}

Error named(const WindowResult& w, const std::string& what) {
  return Error{ErrorKind::parse, fmt::format("window '{}': {}", w.name, what), ""};
}

}  // namespace

WindowResult CharacterizeIdleRecord::encode(WindowId id) const {
  WindowResult w = window(id, std::string(kIdlePrefix) + domain_id, t_begin_ns, t_end_ns);
  w.labels = {{kDomain, domain_id}, {kReading, std::string(to_string(reading))}, {"settled", settled ? kYes : kNo}};
  w.counts = {{"idle_power_w", idle_power_w}, {"idle_power_sd_w", idle_power_sd_w}, {"waited_s", waited_s}};
  if (counter_power_w) w.counts["counter_power_w"] = *counter_power_w;
  return w;
}

Result<CharacterizeIdleRecord> CharacterizeIdleRecord::decode(const WindowResult& w) {
  auto f = reader_for(w, kIdlePrefix);
  if (!f) return f.error();
  CharacterizeIdleRecord r;
  std::string error;
  r.domain_id = f->text(kDomain);
  r.reading = reading_of(*f, error);
  r.settled = f->flag("settled", kYes, kNo);
  r.t_begin_ns = w.t_begin_ns;
  r.t_end_ns = w.t_end_ns;
  r.idle_power_w = f->count("idle_power_w");
  r.idle_power_sd_w = f->count("idle_power_sd_w");
  r.waited_s = f->count("waited_s");
  r.counter_power_w = f->optional_count("counter_power_w");
  if (f->failed()) return f->error();
  if (!error.empty()) return named(w, error);
  return r;
}

WindowResult CharacterizeReadingRecord::encode(WindowId id) const {
  const std::string kind(to_string(reading));
  WindowResult w = window(id, std::string(kReadingPrefix) + domain_id + " " + kind, 0, 0);
  w.labels = {{kDomain, domain_id}, {kReading, kind}};
  if (!first_error.empty()) w.labels["first_error"] = first_error;
  w.counts = {{"reads", reads}, {"failed_reads", failed_reads}, {"changes", changes}};
  for (const auto& [name, field] : kReadingNumbers)
    if (const auto& v = this->*field) w.counts[name] = *v;
  return w;
}

Result<CharacterizeReadingRecord> CharacterizeReadingRecord::decode(const WindowResult& w) {
  auto f = reader_for(w, kReadingPrefix);
  if (!f) return f.error();
  CharacterizeReadingRecord r;
  std::string error;
  r.domain_id = f->text(kDomain);
  r.reading = reading_of(*f, error);
  r.first_error = f->optional_text("first_error").value_or("");
  r.reads = f->count("reads");
  r.failed_reads = f->count("failed_reads");
  r.changes = f->count("changes");
  for (const auto& [name, field] : kReadingNumbers) r.*field = f->optional_count(name);
  if (f->failed()) return f->error();
  if (!error.empty()) return named(w, error);
  return r;
}

WindowResult CharacterizeLoadRecord::encode(WindowId id) const {
  WindowResult w = window(id, std::string(kLoadPrefix) + domain_id, t_a_ns, t_b_ns);
  DomainEnergy e;
  e.domain_id = domain_id;
  e.simulated = simulated;
  e.available = true;
  e.energy_j = counter_j;
  e.mean_power_w = counter_power_w;
  e.estimator = kCounterEstimator;
  if (integrated_instant_j) {
    e.cross_check_j = *integrated_instant_j;
    e.cross_check_estimator = kCrossCheckEstimator;
  }
  w.domains.push_back(e);
  w.labels = {{kDomain, domain_id}, {"load", load}, {"load_report", load_report}};
  for (const auto& a : rows) {
    const std::string k(to_string(a.kind));
    w.counts[k + std::string(kRatio)] = a.ratio;
    w.counts[k + std::string(kDiffPct)] = a.diff_pct;
    w.counts[k + std::string(kUncertaintyPct)] = a.uncertainty_pct;
  }
  return w;
}

Result<CharacterizeLoadRecord> CharacterizeLoadRecord::decode(const WindowResult& w) {
  auto f = reader_for(w, kLoadPrefix);
  if (!f) return f.error();
  CharacterizeLoadRecord r;
  r.domain_id = f->text(kDomain);
  r.load = f->text("load");
  r.load_report = f->text("load_report");
  if (f->failed()) return f->error();
  if (w.domains.size() != 1 || w.domains[0].domain_id != r.domain_id || w.domains[0].estimator != EstimatorUsed(kCounterEstimator))
    return named(w, fmt::format("expected the energy counter's estimate of {} as its one domain", r.domain_id));
  const DomainEnergy& e = w.domains[0];
  r.simulated = e.simulated;
  r.t_a_ns = w.t_begin_ns;
  r.t_b_ns = w.t_end_ns;
  r.counter_j = e.energy_j;
  r.counter_power_w = e.mean_power_w;
  if (e.cross_check_j && e.cross_check_estimator == EstimatorUsed(kCrossCheckEstimator)) r.integrated_instant_j = e.cross_check_j;
  // One row per reading with a ratio count, in the order of the reading kinds.
  for (std::size_t i = 0; i < kReadingKindCount; ++i) {
    const auto kind = static_cast<ReadingKind>(i);
    const std::string k(to_string(kind));
    auto ratio = w.counts.find(k + std::string(kRatio));
    if (ratio == w.counts.end()) continue;
    Agreement a;
    a.kind = kind;
    a.ratio = ratio->second;
    const std::string diff = k + std::string(kDiffPct), unc = k + std::string(kUncertaintyPct);
    a.diff_pct = f->count(diff.c_str());
    a.uncertainty_pct = f->count(unc.c_str());
    r.rows.push_back(a);
  }
  if (f->failed()) return f->error();
  return r;
}

namespace {

CharacterizeIdleRecord idle_record(const DomainCharacter& d) {
  CharacterizeIdleRecord r;
  r.domain_id = d.domain_id;
  r.reading = d.idle.power_kind;
  r.settled = d.idle.settled;
  r.t_begin_ns = d.idle.t_begin_ns;
  r.t_end_ns = d.idle.t_end_ns;
  r.idle_power_w = d.idle.power_w;
  r.idle_power_sd_w = d.idle.power_sd_w;
  r.waited_s = static_cast<double>(d.idle.waited_ns) * 1e-9;
  r.counter_power_w = d.idle.counter_power_w;
  return r;
}

CharacterizeReadingRecord reading_record(const std::string& domain_id, const ReadingCharacter& c) {
  CharacterizeReadingRecord r;
  r.domain_id = domain_id;
  r.reading = c.kind;
  r.first_error = c.first_error;
  r.reads = static_cast<double>(c.reads);
  r.failed_reads = static_cast<double>(c.failed_reads);
  r.changes = static_cast<double>(c.changes);
  if (c.read_cost_ns.n) {
    r.read_cost_median_us = c.read_cost_ns.median * 1e-3;
    r.read_cost_p99_us = c.read_cost_ns.p99 * 1e-3;
  }
  if (c.update_period_ns.n) {
    r.update_period_median_ms = c.update_period_ns.median * 1e-6;
    r.update_period_p10_ms = c.update_period_ns.p10 * 1e-6;
    r.update_period_p90_ms = c.update_period_ns.p90 * 1e-6;
  }
  if (c.sample_spacing_ns.n) {
    r.sample_spacing_median_ms = c.sample_spacing_ns.median * 1e-6;
    r.sample_spacing_p10_ms = c.sample_spacing_ns.p10 * 1e-6;
    r.sample_spacing_p90_ms = c.sample_spacing_ns.p90 * 1e-6;
    r.buffer_depth_samples = static_cast<double>(c.depth_samples);
  }
  return r;
}

CharacterizeLoadRecord load_record(const DomainCharacter& d) {
  CharacterizeLoadRecord r;
  r.domain_id = d.domain_id;
  r.simulated = d.simulated;
  r.load = d.load.load;
  r.load_report = d.load.load_report;
  r.t_a_ns = d.load.t_a_ns;
  r.t_b_ns = d.load.t_b_ns;
  r.counter_j = d.load.counter_j;
  r.counter_power_w = d.load.counter_power_w;
  for (const auto& a : d.load.rows) {
    if (a.kind == ReadingKind::power_instant_w && a.available) r.integrated_instant_j = a.integrated_j;
    if (a.available) r.rows.push_back({a.kind, a.ratio, a.diff_pct, a.uncertainty_pct});
  }
  return r;
}

}  // namespace

std::vector<WindowResult> characterization_windows(const std::vector<DomainCharacter>& result, WindowId first_id) {
  std::vector<WindowResult> out;
  WindowId id = first_id;
  for (const auto& d : result) {
    if (d.idle.measured) out.push_back(idle_record(d).encode(id++));
    for (const auto& c : d.readings) out.push_back(reading_record(d.domain_id, c).encode(id++));
    if (d.load.ran && d.load.skipped.empty()) out.push_back(load_record(d).encode(id++));
  }
  return out;
}

}  // namespace wattlab
