// The estimator enum and the issue codes: one spelling each, read back by one parser, and every
// issue of a window result carries its code.
#include "wattlab/meter/estimator.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "meter/estimate.h"
#include "wattlab/meter/issue_code.h"

namespace wattlab {
namespace {

const Estimator kAll[] = {Estimator::none,
                          Estimator::counter,
                          Estimator::counter_samples,
                          Estimator::counter_instant,
                          Estimator::counter_integrated_samples,
                          Estimator::counter_integrated_instant,
                          Estimator::samples_counter,
                          Estimator::integrated_samples,
                          Estimator::integrated_instant,
                          Estimator::integrated_power_instant_w};

TEST(Estimator, EverySpellingIsTheStoredOneAndReadsBack) {
  // The strings the store's estimator column and the JSON and text outputs have always carried.
  EXPECT_EQ(to_string(Estimator::none), "");
  EXPECT_EQ(to_string(Estimator::counter), "counter");
  EXPECT_EQ(to_string(Estimator::counter_samples), "counter+samples");
  EXPECT_EQ(to_string(Estimator::counter_instant), "counter+instant");
  EXPECT_EQ(to_string(Estimator::counter_integrated_samples), "counter+integrated(samples)");
  EXPECT_EQ(to_string(Estimator::counter_integrated_instant), "counter+integrated(instant)");
  EXPECT_EQ(to_string(Estimator::samples_counter), "samples*counter");
  EXPECT_EQ(to_string(Estimator::integrated_samples), "integrated(samples)");
  EXPECT_EQ(to_string(Estimator::integrated_instant), "integrated(instant)");
  EXPECT_EQ(to_string(Estimator::integrated_power_instant_w), "integrated(power_instant_w)");
  for (Estimator e : kAll) {
    const auto back = parse_estimator(to_string(e));
    ASSERT_TRUE(back.has_value()) << to_string(e);
    EXPECT_EQ(*back, EstimatorUsed(e));
  }
}

TEST(Estimator, EdgesThatDifferAreNamedBothBeginFirst) {
  const EstimatorUsed e = EstimatorUsed::edges(Estimator::counter_integrated_instant, Estimator::counter_samples);
  EXPECT_EQ(to_string(e), "counter+integrated(instant)|counter+samples");
  EXPECT_EQ(parse_estimator("counter+integrated(instant)|counter+samples"), e);
  EXPECT_EQ(EstimatorUsed::edges(Estimator::counter, Estimator::counter), EstimatorUsed(Estimator::counter));
  EXPECT_NE(e, EstimatorUsed(Estimator::counter_integrated_instant));
}

TEST(Estimator, SpellingsWattlabNeverWroteAreRefused) {
  for (const char* s : {"Counter", "counter+", "integrated", "counter|", "|counter", "counter|counter|counter",
                        "counter |counter+samples"})
    EXPECT_FALSE(parse_estimator(s).has_value()) << s;
}

TEST(Estimator, WhatIntegratesPowerAloneCarriesTheGain) {
  EXPECT_TRUE(integrates_power_only(Estimator::integrated_samples));
  EXPECT_TRUE(integrates_power_only(Estimator::integrated_instant));
  EXPECT_TRUE(integrates_power_only(Estimator::integrated_power_instant_w));
  EXPECT_FALSE(integrates_power_only(Estimator::samples_counter));
  EXPECT_FALSE(integrates_power_only(Estimator::counter_integrated_samples));
  EXPECT_EQ(counter_plus(Estimator::integrated_samples), Estimator::counter_integrated_samples);
  EXPECT_EQ(counter_plus(Estimator::integrated_instant), Estimator::counter_integrated_instant);
}

TEST(IssueCode, EachCodeHasItsOwnSpelling) {
  std::set<std::string> seen;
  for (int c = 0; c <= static_cast<int>(IssueCode::provisional); ++c) {
    const std::string s(to_string(static_cast<IssueCode>(c)));
    EXPECT_FALSE(s.empty());
    EXPECT_TRUE(seen.insert(s).second) << s;
  }
  EXPECT_EQ(to_string(IssueCode::capped_share_from_reasons), "capped_share_from_reasons");
}

// A domain with an H200-like counter and nothing else read yet.
Domain counter_only() {
  Domain d;
  d.id = "gpu:0";
  ReadingModel c;
  c.kind = ReadingKind::energy_counter_j;
  c.update_period_ns = 100'000'000;
  d.model.readings = {c};
  return d;
}

TEST(IssueCode, EveryIssueOfAWindowCarriesItsCode) {
  const Domain d = counter_only();
  Timeline tl(d, 1024);
  // Nothing read: no counter around the edges, no estimate, and a window shorter than an update.
  DomainEnergy e = estimate_window(d, tl, DomainState{}, 0, 20'000'000, std::nullopt);
  ASSERT_EQ(e.issue_codes.size(), e.issues.size());
  ASSERT_EQ(e.issues.size(), 3u);
  EXPECT_EQ(e.issue_codes[0], IssueCode::counter_not_held);
  EXPECT_EQ(e.issue_codes[1], IssueCode::no_estimate);
  EXPECT_EQ(e.issue_codes[2], IssueCode::shorter_than_update);
  EXPECT_NE(e.issues[2].find("shorter than the 100 ms counter update"), std::string::npos);
  // Lost during the window, and failed reads.
  tl.add_failure(5'000'000, ReadingKind::energy_counter_j);
  e = estimate_window(d, tl, DomainState{true, 10'000'000}, 0, 200'000'000, std::nullopt);
  ASSERT_EQ(e.issue_codes.size(), e.issues.size());
  EXPECT_EQ(e.issue_codes.front(), IssueCode::device_lost);
  EXPECT_EQ(e.issue_codes.back(), IssueCode::reading_failed);
  // A result that is not final says so in every domain, last.
  DomainTimelines all;
  all.domains = {d};
  all.timelines.push_back(tl);
  all.states.resize(1);
  const WindowResult r = build_window_result(all, 7, "w", 0, 200'000'000, {}, false);
  ASSERT_EQ(r.domains.size(), 1u);
  EXPECT_EQ(r.domains[0].issue_codes.back(), IssueCode::provisional);
  EXPECT_EQ(r.domains[0].issues.back(), "provisional");
}

}  // namespace
}  // namespace wattlab
