// The spellings of the estimators and issue codes: one table each, read both ways.
#include "wattlab/meter/estimator.h"

#include <array>
#include <ostream>
#include <utility>

#include "wattlab/meter/issue_code.h"

namespace wattlab {
namespace {

constexpr std::array<std::pair<Estimator, std::string_view>, 11> kEstimatorNames{{
    {Estimator::none, ""},
    {Estimator::counter, "counter"},
    {Estimator::counter_samples, "counter+samples"},
    {Estimator::counter_instant, "counter+instant"},
    {Estimator::counter_integrated_samples, "counter+integrated(samples)"},
    {Estimator::counter_integrated_instant, "counter+integrated(instant)"},
    {Estimator::samples_counter, "samples*counter"},
    {Estimator::integrated_samples, "integrated(samples)"},
    {Estimator::integrated_instant, "integrated(instant)"},
    {Estimator::integrated_power_instant_w, "integrated(power_instant_w)"},
    {Estimator::integrated_average, "integrated(average)"},
}};

std::optional<Estimator> parse_one(std::string_view text) {
  for (const auto& [e, name] : kEstimatorNames)
    if (name == text) return e;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Estimator e) {
  for (const auto& [k, name] : kEstimatorNames)
    if (k == e) return name;
  return "";
}

bool integrates_power_only(Estimator e) {
  return e == Estimator::integrated_samples || e == Estimator::integrated_instant ||
         e == Estimator::integrated_power_instant_w || e == Estimator::integrated_average;
}

Estimator counter_plus(Estimator integrated) {
  return integrated == Estimator::integrated_samples ? Estimator::counter_integrated_samples
                                                     : Estimator::counter_integrated_instant;
}

std::string to_string(const EstimatorUsed& e) {
  std::string s(to_string(e.kind));
  if (e.end_kind != Estimator::none) (s += '|') += to_string(e.end_kind);
  return s;
}

std::optional<EstimatorUsed> parse_estimator(std::string_view text) {
  const std::size_t bar = text.find('|');
  const auto first = parse_one(text.substr(0, bar));
  if (!first) return std::nullopt;
  if (bar == std::string_view::npos) return EstimatorUsed(*first);
  const auto second = parse_one(text.substr(bar + 1));
  // Only two edges, each a real estimator: "a|", "|b" and "a|b|c" were never written.
  if (!second || *first == Estimator::none || *second == Estimator::none) return std::nullopt;
  EstimatorUsed e(*first);
  e.end_kind = *second;
  return e;
}

std::ostream& operator<<(std::ostream& os, Estimator e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const EstimatorUsed& e) { return os << to_string(e); }

std::string_view to_string(IssueCode code) {
  switch (code) {
    case IssueCode::device_lost: return "device_lost";
    case IssueCode::sources_disagree: return "sources_disagree";
    case IssueCode::counter_not_published: return "counter_not_published";
    case IssueCode::counter_not_held: return "counter_not_held";
    case IssueCode::no_estimate: return "no_estimate";
    case IssueCode::shorter_than_update: return "shorter_than_update";
    case IssueCode::reading_failed: return "reading_failed";
    case IssueCode::counter_reset: return "counter_reset";
    case IssueCode::capped_share_from_reasons: return "capped_share_from_reasons";
    case IssueCode::provisional: return "provisional";
    case IssueCode::shorter_than_average: return "shorter_than_average";
    case IssueCode::average_gap: return "average_gap";
  }
  return "unknown";
}

}  // namespace wattlab
