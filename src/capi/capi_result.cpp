// wattlab_result: a window's result read through accessors, so that the result may grow without
// breaking the ABI. Out of range or NULL, an accessor returns NaN, 0 or NULL and sets the last error.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "capi_internal.h"

namespace wattlab::capi {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const wattlab::DomainEnergy* domain(const wattlab_result* r, size_t d, const char* fn) {
  if (!r) {
    note_error(WATTLAB_ERR_INVALID_ARGUMENT, std::string(fn) + ": result is NULL");
    return nullptr;
  }
  if (d >= r->window.domains.size()) {
    note_error(WATTLAB_ERR_INVALID_ARGUMENT, std::string(fn) + ": no domain " + std::to_string(d) + " (the result has " +
                                                 std::to_string(r->window.domains.size()) + ")");
    return nullptr;
  }
  return &r->window.domains[d];
}

bool has(const wattlab_result* r, const char* fn) {
  if (r) return true;
  note_error(WATTLAB_ERR_INVALID_ARGUMENT, std::string(fn) + ": result is NULL");
  return false;
}

bool in_range(size_t i, size_t n, const char* fn) {
  if (i < n) return true;
  note_error(WATTLAB_ERR_INVALID_ARGUMENT, std::string(fn) + ": index " + std::to_string(i) + " is out of range (" +
                                               std::to_string(n) + " entries)");
  return false;
}

// The C header's stable numbers for the meter's issue codes.
int to_c(wattlab::IssueCode code) {
  using wattlab::IssueCode;
  switch (code) {
    case IssueCode::device_lost: return WATTLAB_ISSUE_DEVICE_LOST;
    case IssueCode::sources_disagree: return WATTLAB_ISSUE_SOURCES_DISAGREE;
    case IssueCode::counter_not_published: return WATTLAB_ISSUE_COUNTER_NOT_PUBLISHED;
    case IssueCode::counter_not_held: return WATTLAB_ISSUE_COUNTER_NOT_HELD;
    case IssueCode::no_estimate: return WATTLAB_ISSUE_NO_ESTIMATE;
    case IssueCode::shorter_than_update: return WATTLAB_ISSUE_SHORTER_THAN_UPDATE;
    case IssueCode::reading_failed: return WATTLAB_ISSUE_READING_FAILED;
    case IssueCode::counter_reset: return WATTLAB_ISSUE_COUNTER_RESET;
    case IssueCode::capped_share_from_reasons: return WATTLAB_ISSUE_CAPPED_SHARE_FROM_REASONS;
    case IssueCode::provisional: return WATTLAB_ISSUE_PROVISIONAL;
    case IssueCode::shorter_than_average: return WATTLAB_ISSUE_SHORTER_THAN_AVERAGE;
    case IssueCode::average_gap: return WATTLAB_ISSUE_AVERAGE_GAP;
  }
  return WATTLAB_ISSUE_OTHER;
}

std::optional<double> telemetry(const wattlab::TelemetrySummary& t, int field) {
  switch (field) {
    case WATTLAB_TELEMETRY_MEAN_SM_CLOCK_MHZ: return t.mean_sm_clock_mhz;
    case WATTLAB_TELEMETRY_MEAN_MEM_CLOCK_MHZ: return t.mean_mem_clock_mhz;
    case WATTLAB_TELEMETRY_MEAN_TEMPERATURE_C: return t.mean_temperature_c;
    case WATTLAB_TELEMETRY_TEMPERATURE_BEGIN_C: return t.temperature_begin_c;
    case WATTLAB_TELEMETRY_TEMPERATURE_END_C: return t.temperature_end_c;
    case WATTLAB_TELEMETRY_MEAN_UTILIZATION_GPU_PCT: return t.mean_utilization_gpu_pct;
    case WATTLAB_TELEMETRY_POWER_CAPPED_FRACTION: return t.power_capped_fraction;
    case WATTLAB_TELEMETRY_THERMAL_CAPPED_FRACTION: return t.thermal_capped_fraction;
    case WATTLAB_TELEMETRY_MEAN_SM_ACTIVITY_PCT: return t.mean_sm_activity_pct;
    case WATTLAB_TELEMETRY_MEAN_SM_OCCUPANCY_PCT: return t.mean_sm_occupancy_pct;
    case WATTLAB_TELEMETRY_MEAN_TENSOR_ACTIVITY_PCT: return t.mean_tensor_activity_pct;
    case WATTLAB_TELEMETRY_MEAN_DRAM_BW_PCT: return t.mean_dram_bw_pct;
    case WATTLAB_TELEMETRY_POWER_LIMIT_W: return t.power_limit_w;
    case WATTLAB_TELEMETRY_MAX_MEMORY_USED_BYTES: return t.max_memory_used_bytes;
    case WATTLAB_TELEMETRY_CLOCK_EVENT_REASONS_SEEN:
      if (t.clock_event_reasons_seen) return static_cast<double>(*t.clock_event_reasons_seen);
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace
}  // namespace wattlab::capi

using wattlab::capi::domain;
using wattlab::capi::has;
using wattlab::capi::in_range;
using wattlab::capi::kNaN;

extern "C" {

const char* wattlab_issue_code_name(int code) {
  if (code == WATTLAB_ISSUE_OTHER) return "other";
  for (int c = 0; c <= static_cast<int>(wattlab::IssueCode::provisional); ++c) {
    const auto k = static_cast<wattlab::IssueCode>(c);
    if (wattlab::capi::to_c(k) == code) return wattlab::to_string(k).data();
  }
  return nullptr;
}

void wattlab_result_free(wattlab_result* result) { delete result; }

wattlab_window_id wattlab_result_id(const wattlab_result* r) { return has(r, "wattlab_result_id") ? r->window.id : 0; }
const char* wattlab_result_name(const wattlab_result* r) {
  return has(r, "wattlab_result_name") ? r->window.name.c_str() : nullptr;
}
int64_t wattlab_result_t_begin_ns(const wattlab_result* r) {
  return has(r, "wattlab_result_t_begin_ns") ? r->window.t_begin_ns : 0;
}
int64_t wattlab_result_t_end_ns(const wattlab_result* r) { return has(r, "wattlab_result_t_end_ns") ? r->window.t_end_ns : 0; }
double wattlab_result_dur_s(const wattlab_result* r) { return has(r, "wattlab_result_dur_s") ? r->window.dur_s() : kNaN; }
int wattlab_result_final(const wattlab_result* r) { return has(r, "wattlab_result_final") && r->window.final ? 1 : 0; }
int wattlab_result_simulated(const wattlab_result* r) {
  if (!has(r, "wattlab_result_simulated")) return 0;
  for (const auto& d : r->window.domains)
    if (d.simulated) return 1;
  return 0;
}

size_t wattlab_result_count_count(const wattlab_result* r) { return has(r, "wattlab_result_count_count") ? r->counts.size() : 0; }
const char* wattlab_result_count_key(const wattlab_result* r, size_t i) {
  if (!has(r, "wattlab_result_count_key") || !in_range(i, r->counts.size(), "wattlab_result_count_key")) return nullptr;
  return r->counts[i].first.c_str();
}
double wattlab_result_count_value(const wattlab_result* r, size_t i) {
  if (!has(r, "wattlab_result_count_value") || !in_range(i, r->counts.size(), "wattlab_result_count_value")) return kNaN;
  return r->counts[i].second;
}
size_t wattlab_result_label_count(const wattlab_result* r) { return has(r, "wattlab_result_label_count") ? r->labels.size() : 0; }
const char* wattlab_result_label_key(const wattlab_result* r, size_t i) {
  if (!has(r, "wattlab_result_label_key") || !in_range(i, r->labels.size(), "wattlab_result_label_key")) return nullptr;
  return r->labels[i].first.c_str();
}
const char* wattlab_result_label_value(const wattlab_result* r, size_t i) {
  if (!has(r, "wattlab_result_label_value") || !in_range(i, r->labels.size(), "wattlab_result_label_value")) return nullptr;
  return r->labels[i].second.c_str();
}

size_t wattlab_result_domain_count(const wattlab_result* r) {
  return has(r, "wattlab_result_domain_count") ? r->window.domains.size() : 0;
}
const char* wattlab_result_domain_id(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_domain_id");
  return e ? e->domain_id.c_str() : nullptr;
}
int wattlab_result_domain_simulated(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_domain_simulated");
  return e && e->simulated ? 1 : 0;
}
int wattlab_result_available(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_available");
  return e && e->available ? 1 : 0;
}
double wattlab_result_energy_j(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_energy_j");
  return e && e->available ? e->energy_j : kNaN;
}
double wattlab_result_uncertainty_j(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_uncertainty_j");
  return e && e->available ? e->uncertainty_j : kNaN;
}
double wattlab_result_systematic_j(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_systematic_j");
  return e && e->available ? e->systematic_j : kNaN;
}
double wattlab_result_mean_power_w(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_mean_power_w");
  return e && e->available ? e->mean_power_w : kNaN;
}
double wattlab_result_peak_power_w(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_peak_power_w");
  return e && e->available ? e->peak_power_w : kNaN;
}
const char* wattlab_result_estimator(const wattlab_result* r, size_t d) {
  return domain(r, d, "wattlab_result_estimator") ? r->estimators[d].c_str() : nullptr;
}
double wattlab_result_cross_check_j(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_cross_check_j");
  return e && e->cross_check_j ? *e->cross_check_j : kNaN;
}
size_t wattlab_result_readings_used(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_readings_used");
  return e ? e->readings_used : 0;
}
size_t wattlab_result_issue_count(const wattlab_result* r, size_t d) {
  const auto* e = domain(r, d, "wattlab_result_issue_count");
  return e ? e->issues.size() : 0;
}
int wattlab_result_issue_code(const wattlab_result* r, size_t d, size_t i) {
  const auto* e = domain(r, d, "wattlab_result_issue_code");
  if (!e || !in_range(i, e->issues.size(), "wattlab_result_issue_code")) return WATTLAB_ISSUE_OTHER;
  return i < e->issue_codes.size() ? wattlab::capi::to_c(e->issue_codes[i]) : WATTLAB_ISSUE_OTHER;
}
const char* wattlab_result_issue_text(const wattlab_result* r, size_t d, size_t i) {
  const auto* e = domain(r, d, "wattlab_result_issue_text");
  if (!e || !in_range(i, e->issues.size(), "wattlab_result_issue_text")) return nullptr;
  return e->issues[i].c_str();
}
int wattlab_result_telemetry(const wattlab_result* r, size_t d, int field, double* out) {
  const auto* e = domain(r, d, "wattlab_result_telemetry");
  if (!e) return 0;
  const std::optional<double> v = wattlab::capi::telemetry(e->telemetry, field);
  if (!v) return 0;
  if (out) *out = *v;
  return 1;
}

}  // extern "C"
