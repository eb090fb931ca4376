// The callers' side of windows: ids, the lock-free queue of edges (several producer threads, one
// drainer), and the ids of dropped results that close() refuses.
#include "meter/window_intake.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

namespace wattlab {
namespace {

TEST(IdRanges, MergesNeighboursAndAnswersMembership) {
  IdRanges r;
  for (WindowId id : {5, 7, 6, 1, 2, 10}) r.insert(id);
  EXPECT_EQ(r.runs(), 3u);  // 1-2, 5-7, 10
  for (WindowId id : {1, 2, 5, 6, 7, 10}) EXPECT_TRUE(r.contains(id)) << id;
  for (WindowId id : {0, 3, 4, 8, 9, 11}) EXPECT_FALSE(r.contains(id)) << id;
  r.insert(3);
  r.insert(4);
  EXPECT_EQ(r.runs(), 2u);  // 1-7, 10
  r.insert(9);
  r.insert(8);
  EXPECT_EQ(r.runs(), 1u);
  r.insert(4);  // again: nothing changes
  EXPECT_EQ(r.runs(), 1u);
  EXPECT_TRUE(r.contains(8));
}

TEST(WindowIntake, EdgesComeOutInTheOrderTheyWerePushed) {
  WindowIntake in;
  const WindowId a = in.open("a", 100);
  const WindowId b = in.add("b", 50, 80);
  EXPECT_TRUE(in.close(a, 200));
  EXPECT_EQ(b, a + 1);
  std::vector<EdgeEvent> out;
  in.drain(out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, EdgeEvent::Kind::open);
  EXPECT_EQ(out[0].name, "a");
  EXPECT_EQ(out[0].a_ns, 100);
  EXPECT_EQ(out[1].kind, EdgeEvent::Kind::add);
  EXPECT_EQ(out[1].b_ns, 80);
  EXPECT_EQ(out[2].kind, EdgeEvent::Kind::close);
  EXPECT_EQ(out[2].id, a);
  EXPECT_EQ(out[2].b_ns, 200);
  out.clear();
  in.drain(out);
  EXPECT_TRUE(out.empty());
  in.open("left in the queue", 300);  // freed by the destructor
}

TEST(WindowIntake, CloseRefusesUnknownAndDroppedWindows) {
  WindowIntake in;
  EXPECT_FALSE(in.close(0, 1));
  EXPECT_FALSE(in.close(1, 1)) << "never handed out";
  const WindowId a = in.open("a", 1);
  const WindowId b = in.open("b", 2);
  EXPECT_TRUE(in.known(a));
  in.dropped({a});
  EXPECT_FALSE(in.known(a));
  EXPECT_FALSE(in.close(a, 3));
  EXPECT_TRUE(in.close(b, 3));
  std::vector<EdgeEvent> out;
  in.drain(out);
  EXPECT_EQ(out.size(), 3u) << "a refused close pushes nothing";
}

TEST(WindowIntake, ManyThreadsPushWhileOneDrains) {
  WindowIntake in;
  constexpr int kThreads = 4, kWindows = 5'000;
  std::atomic<int> done{0};
  std::vector<EdgeEvent> out;
  std::thread drainer([&] {
    while (done.load() < kThreads) in.drain(out);
    in.drain(out);
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kThreads; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < kWindows; ++i) {
        const WindowId id = in.open("w" + std::to_string(p), i);
        EXPECT_TRUE(in.close(id, i + 1));
      }
      done.fetch_add(1);
    });
  for (auto& t : producers) t.join();
  drainer.join();
  ASSERT_EQ(out.size(), 2u * kThreads * kWindows);
  // Every window opened once and closed once, the open first; each thread's windows in its order.
  std::map<WindowId, int> state;  // 1 open, 2 closed
  std::map<std::string, int64_t> last_open_t;
  for (const EdgeEvent& e : out) {
    if (e.kind == EdgeEvent::Kind::open) {
      EXPECT_EQ(state[e.id], 0) << e.id;
      state[e.id] = 1;
      const auto it = last_open_t.find(e.name);
      if (it != last_open_t.end()) {
        EXPECT_LT(it->second, e.a_ns) << e.name;
      }
      last_open_t[e.name] = e.a_ns;
    } else {
      ASSERT_EQ(e.kind, EdgeEvent::Kind::close);
      EXPECT_EQ(state[e.id], 1) << e.id;
      state[e.id] = 2;
    }
  }
  EXPECT_EQ(state.size(), static_cast<std::size_t>(kThreads * kWindows));
}

}  // namespace
}  // namespace wattlab
