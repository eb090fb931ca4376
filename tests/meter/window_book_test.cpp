// The window book on a hand-fed timeline (100 W, a counter point every 100 ms, a sample every
// 20 ms): results once the timeline covers the end, begin edges anchored while the timeline holds
// them, the end timeout, the finished capacity and the batch limit.
#include "meter/window_book.h"

#include <gtest/gtest.h>

#include <vector>

namespace wattlab {
namespace {

constexpr int64_t kMs = 1'000'000;

struct Feed {
  DomainTimelines tl;
  int64_t t_ns = 0;
  double counter_j = 1000;

  explicit Feed(std::size_t capacity = 1 << 14) {
    Domain d;
    d.id = "gpu:0";
    ReadingModel c;
    c.kind = ReadingKind::energy_counter_j;
    c.update_period_ns = 100 * kMs;
    c.resolution = 1e-3;
    ReadingModel s;
    s.kind = ReadingKind::power_sample_w;
    s.update_period_ns = 20 * kMs;
    s.averaging_window_ns = 20 * kMs;
    d.model.readings = {c, s};
    tl.domains = {d};
    tl.timelines.emplace_back(d, capacity);
    tl.states.resize(1);
    tl.any_counter = true;
    tl.timelines[0].add_counter(counter_j, 0, kMs);
  }
  Timeline& timeline() { return tl.timelines[0]; }
  // 100 W up to t_end_ns.
  void until(int64_t t_end_ns) {
    while (t_ns < t_end_ns) {
      t_ns += 20 * kMs;
      timeline().add_sample({t_ns, ReadingKind::power_sample_w, 100.0});
      if (t_ns % (100 * kMs) == 0) timeline().add_counter(counter_j += 10.0, t_ns, kMs);
    }
  }
  // Samples only, as when the counter stops answering.
  void samples_until(int64_t t_end_ns) {
    while (t_ns < t_end_ns) {
      t_ns += 20 * kMs;
      timeline().add_sample({t_ns, ReadingKind::power_sample_w, 100.0});
    }
  }
};

EdgeEvent open(WindowId id, int64_t t_ns) { return {EdgeEvent::Kind::open, id, t_ns, -1, "w"}; }
EdgeEvent close(WindowId id, int64_t t_ns) { return {EdgeEvent::Kind::close, id, 0, t_ns, {}}; }
EdgeEvent add(WindowId id, int64_t a_ns, int64_t b_ns) { return {EdgeEvent::Kind::add, id, a_ns, b_ns, "w"}; }

void apply(WindowBook& book, EdgeEvent e) { book.apply(e); }

bool has_code(const DomainEnergy& d, IssueCode code) {
  for (IssueCode c : d.issue_codes)
    if (c == code) return true;
  return false;
}

TEST(WindowBook, AResultIsBuiltOnceTheTimelineCoversItsEnd) {
  Feed f;
  f.until(1000 * kMs);
  WindowBook book(1, true, 100);
  apply(book, open(1, 200 * kMs));
  apply(book, add(2, 300 * kMs, 500 * kMs));
  apply(book, close(1, 1200 * kMs));
  apply(book, close(1, 1300 * kMs));  // closed already: nothing changes
  std::vector<WindowId> dropped;
  auto p = book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped);
  EXPECT_TRUE(p.finished_any);
  ASSERT_TRUE(book.find(2)->final_result != nullptr);
  EXPECT_NEAR(book.find(2)->final_result->domains.at(0).energy_j, 20.0, 0.05);
  EXPECT_FALSE(book.find(1)->final_result != nullptr) << "its end is past the newest counter point";
  f.until(1500 * kMs);
  p = book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped);
  EXPECT_TRUE(p.finished_any);
  const auto& r = book.find(1)->final_result;
  ASSERT_TRUE(r != nullptr);
  EXPECT_TRUE(r->final);
  EXPECT_EQ(r->t_end_ns, 1200 * kMs);
  EXPECT_NEAR(r->domains.at(0).energy_j, 100.0, 0.1);
  EXPECT_TRUE(dropped.empty());
}

TEST(WindowBook, ABeginEdgeIsAnchoredWhileTheTimelineStillHoldsIt) {
  // 64 counter points and 1,024 samples: the timeline forgets the window's start within ~21 s.
  Feed f(1024);
  WindowBook book(1, true, 100);
  f.until(100 * kMs);
  apply(book, open(1, 250 * kMs));
  std::vector<WindowId> dropped;
  for (int64_t t = 500 * kMs; t <= 30'000 * kMs; t += 500 * kMs) {
    f.until(t);
    book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped);
  }
  EXPECT_FALSE(f.timeline().energy_at(250 * kMs).ok) << "the timeline no longer holds the start";
  apply(book, close(1, 29'500 * kMs));
  book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped);
  const auto& r = book.find(1)->final_result;
  ASSERT_TRUE(r != nullptr);
  ASSERT_TRUE(r->domains.at(0).available);
  EXPECT_NEAR(r->domains.at(0).energy_j, 100.0 * 29.25, 0.1);
}

TEST(WindowBook, AnEndNeverCoveredIsFinalAfterTheTimeoutAndSaysSo) {
  Feed f;
  f.until(1000 * kMs);
  f.samples_until(1600 * kMs);
  WindowBook book(1, true, 100);
  apply(book, add(1, 500 * kMs, 1500 * kMs));
  std::vector<WindowId> dropped;
  EXPECT_FALSE(book.process(f.tl, 5'000 * kMs, 4'000 * kMs, SIZE_MAX, dropped).finished_any);
  EXPECT_TRUE(book.process(f.tl, 5'600 * kMs, 4'000 * kMs, SIZE_MAX, dropped).finished_any);
  const DomainEnergy& d = book.find(1)->final_result->domains.at(0);
  EXPECT_TRUE(has_code(d, IssueCode::counter_not_published));
  EXPECT_EQ(d.issue_codes.size(), d.issues.size());
}

TEST(WindowBook, OnlyTheNewestFinishedResultsAreKeptAndTheDroppedAreReported) {
  Feed f;
  f.until(2000 * kMs);
  WindowBook book(1, true, 2);
  for (WindowId id = 1; id <= 4; ++id) apply(book, add(id, 100 * kMs, 200 * kMs * static_cast<int64_t>(id)));
  apply(book, open(5, 100 * kMs));  // open: never dropped
  std::vector<WindowId> dropped;
  book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped);
  EXPECT_EQ(dropped, (std::vector<WindowId>{1, 2}));
  EXPECT_EQ(book.find(1), nullptr);
  EXPECT_EQ(book.find(2), nullptr);
  EXPECT_TRUE(book.find(3)->final_result != nullptr);
  EXPECT_TRUE(book.find(4)->final_result != nullptr);
  EXPECT_NE(book.find(5), nullptr);
}

TEST(WindowBook, EveryResultIsHandedOnAsItBecomesFinalAlsoThoseTheCapacityDrops) {
  Feed f;
  f.until(2000 * kMs);
  WindowBook book(1, true, 2);
  for (WindowId id = 1; id <= 4; ++id) apply(book, add(id, 100 * kMs, 200 * kMs * static_cast<int64_t>(id)));
  std::vector<WindowId> dropped;
  std::vector<std::shared_ptr<const WindowResult>> finished;
  book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped, &finished);
  EXPECT_EQ(dropped, (std::vector<WindowId>{1, 2})) << "the book keeps only its capacity";
  ASSERT_EQ(finished.size(), 4u) << "but every result went out";
  for (std::size_t i = 0; i < finished.size(); ++i) {
    const WindowId id = i + 1;
    EXPECT_EQ(finished[i]->id, id) << "in the order made (by end)";
    EXPECT_TRUE(finished[i]->final);
    // 100 W from 100 ms to 200 ms x id.
    EXPECT_NEAR(finished[i]->domains.at(0).energy_j, 100.0 * (0.2 * static_cast<double>(id) - 0.1), 0.1);
  }
  EXPECT_EQ(book.find(4)->final_result, finished[3]) << "the kept result is the one handed on, not a copy";
  finished.clear();
  book.process(f.tl, f.t_ns, 4'000 * kMs, SIZE_MAX, dropped, &finished);
  EXPECT_TRUE(finished.empty()) << "each result goes out once";
}

TEST(WindowBook, AtMostMaxFinalResultsPerCall) {
  Feed f;
  f.until(2000 * kMs);
  WindowBook book(1, true, 100);
  for (WindowId id = 1; id <= 3; ++id) apply(book, add(id, 100 * kMs, 300 * kMs * static_cast<int64_t>(id)));
  std::vector<WindowId> dropped;
  auto p = book.process(f.tl, f.t_ns, 4'000 * kMs, 2, dropped);
  EXPECT_TRUE(p.more);
  EXPECT_TRUE(book.find(2)->final_result != nullptr);
  EXPECT_FALSE(book.find(3)->final_result != nullptr);
  p = book.process(f.tl, f.t_ns, 4'000 * kMs, 2, dropped);
  EXPECT_FALSE(p.more);
  EXPECT_TRUE(book.find(3)->final_result != nullptr);
}

}  // namespace
}  // namespace wattlab
