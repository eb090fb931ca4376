// Marks: the protocol parser, the collector (nesting, malformed lines, unclosed windows,
// timestamps), the pipe channel, the header-only client, and marks turned into meter windows.
#include "meter/marks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "meter/sim_fixture.h"
#include "wattlab/marks.h"

using namespace wattlab;
using namespace wattlab::marks;

namespace {

constexpr int64_t kStart = 1'000'000'000;

std::string line(const std::string& op, const std::string& rest) { return "{\"op\":\"" + op + "\"" + rest + "}"; }

}  // namespace

TEST(MarksParse, FullLine) {
  auto m = parse_mark(R"({"op":"close","name":"b8","t_ns":123,"counts":{"tokens":512,"requests":8},"labels":{"batch":8}})");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->op, Op::close);
  EXPECT_EQ(m->name, "b8");
  EXPECT_EQ(m->t_ns, 123);
  EXPECT_DOUBLE_EQ(m->counts.at("tokens"), 512);
  EXPECT_DOUBLE_EQ(m->counts.at("requests"), 8);
  EXPECT_EQ(m->labels.at("batch"), "8");  // numbers become text
}

TEST(MarksParse, TagWithoutNameIsRunLevel) {
  auto m = parse_mark(R"({"op":"tag","tags":{"model":"llama","gpus":1}})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tags.at("model"), "llama");
  EXPECT_EQ(m->tags.at("gpus"), "1");
  EXPECT_TRUE(m->labels.empty());
  auto w = parse_mark(R"({"op":"tag","name":"w","tags":{"phase":"steady"}})");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->labels.at("phase"), "steady");
  EXPECT_TRUE(w->tags.empty());
}

TEST(MarksParse, RejectsWhatIsWrongAndSaysWhat) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"not json", "invalid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"name":"x"})", "'op'"},
      {R"({"op":"jump","name":"x"})", "unknown op 'jump'"},
      {R"({"op":"open"})", "needs a 'name'"},
      {R"({"op":"open","name":""})", "non-empty string"},
      {R"({"op":"open","name":"x","t_ns":1.5})", "'t_ns'"},
      {R"({"op":"open","name":"x","t_ns":-4})", "'t_ns'"},
      {R"({"op":"open","name":"x","t_ns":"12"})", "'t_ns'"},
      {R"({"op":"count","name":"x"})", "non-empty 'counts'"},
      {R"({"op":"count","counts":{"tokens":-1}})", "finite number >= 0"},
      {R"({"op":"count","counts":{"tokens":"many"}})", "finite number >= 0"},
      {R"({"op":"count","counts":[1]})", "'counts' must be an object"},
      {R"({"op":"tag","tags":{}})", "non-empty 'tags'"},
      {R"({"op":"tag","tags":{"marks.lines":"3"}})", "reserved"},
      {R"({"op":"tag","tags":{"model":{"a":1}}})", "'tags.model'"},
      {R"({"op":"open","name":"x","labels":"b8"})", "'labels' must be an object"},
  };
  for (const auto& [text, why] : bad) {
    auto m = parse_mark(text);
    ASSERT_FALSE(m) << text;
    EXPECT_NE(m.error().what.find(why), std::string::npos) << text << " -> " << m.error().what;
  }
  EXPECT_FALSE(parse_mark(R"({"op":"open","name":")" + std::string(kMaxLineBytes, 'a') + "\"}"));
}

TEST(MarksCollector, OpenCountCloseWithClientTimes) {
  MarkCollector c(kStart);
  EXPECT_TRUE(c.feed(line("open", R"(,"name":"b1","t_ns":2000000000)"), 2'000'001'000).empty());
  EXPECT_TRUE(c.feed(line("count", R"(,"name":"b1","counts":{"tokens":100})"), 2'500'000'000).empty());
  auto done = c.feed(line("close", R"(,"name":"b1","t_ns":3000000000,"counts":{"tokens":28,"requests":1})"), 3'000'002'000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].name, "b1");
  EXPECT_EQ(done[0].t_begin_ns, 2'000'000'000);
  EXPECT_EQ(done[0].t_end_ns, 3'000'000'000);  // the client's stamp, not the arrival
  EXPECT_DOUBLE_EQ(done[0].counts.at("tokens"), 128);
  EXPECT_DOUBLE_EQ(done[0].counts.at("requests"), 1);
  EXPECT_EQ(done[0].labels.at(kLabelTimeSource), "client");
  EXPECT_EQ(c.report().arrival_stamped, 0u);
  EXPECT_EQ(c.report().malformed, 0u);
  EXPECT_EQ(c.report().windows, 1u);
}

TEST(MarksCollector, MissingTimestampsAreStampedOnArrivalAndSaySo) {
  MarkCollector c(kStart);
  c.feed(line("open", R"(,"name":"a")"), 2'000'000'000);
  auto done = c.feed(line("close", R"(,"name":"a","t_ns":2500000000)"), 2'600'000'000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].t_begin_ns, 2'000'000'000);
  EXPECT_EQ(done[0].t_end_ns, 2'500'000'000);
  EXPECT_EQ(done[0].labels.at(kLabelTimeSource), "client+arrival");
  EXPECT_EQ(c.report().arrival_stamped, 1u);
  c.feed(line("open", R"(,"name":"b")"), 3'000'000'000);
  done = c.feed(line("close", R"(,"name":"b")"), 3'100'000'000);
  EXPECT_EQ(done.at(0).labels.at(kLabelTimeSource), "arrival");
  EXPECT_EQ(c.report().arrival_stamped, 3u);
}

TEST(MarksCollector, TimestampsFromAnotherClockAreRejected) {
  MarkCollector c(kStart);
  // time.time_ns() (wall clock, ~1.7e18) instead of time.monotonic_ns(): in the future.
  c.feed(line("open", R"(,"name":"a","t_ns":1700000000000000000)"), 2'000'000'000);
  // Before the run began.
  c.feed(line("open", R"(,"name":"b","t_ns":5)"), 2'000'000'000);
  EXPECT_EQ(c.open_windows(), 0u);
  EXPECT_EQ(c.report().malformed, 2u);
  EXPECT_NE(c.report().malformed_examples.at(0).find("CLOCK_MONOTONIC"), std::string::npos);
  // Within the slack: scheduling noise between the stamp and the read is accepted.
  c.feed(line("open", R"(,"name":"c","t_ns":2010000000)"), 2'000'000'000);
  EXPECT_EQ(c.open_windows(), 1u);
}

TEST(MarksCollector, NestingAndUnnamedCountsGoToEveryOpenWindow) {
  MarkCollector c(kStart);
  c.feed(line("open", R"(,"name":"sweep","t_ns":2000000000)"), 2'000'000'000);
  c.feed(line("open", R"(,"name":"b1","t_ns":2100000000,"labels":{"batch":1})"), 2'100'000'000);
  c.feed(line("count", R"(,"counts":{"tokens":10})"), 2'200'000'000);
  auto inner = c.feed(line("close", R"(,"name":"b1","t_ns":2300000000)"), 2'300'000'000);
  c.feed(line("open", R"(,"name":"b1","t_ns":2400000000,"labels":{"batch":2})"), 2'400'000'000);  // same name again
  c.feed(line("count", R"(,"name":"b1","counts":{"tokens":20})"), 2'500'000'000);
  auto inner2 = c.feed(line("close", R"(,"name":"b1","t_ns":2600000000)"), 2'600'000'000);
  auto outer = c.feed(line("close", R"(,"name":"sweep","t_ns":2700000000)"), 2'700'000'000);
  ASSERT_EQ(inner.size(), 1u);
  ASSERT_EQ(inner2.size(), 1u);
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_DOUBLE_EQ(inner[0].counts.at("tokens"), 10);
  EXPECT_EQ(inner[0].labels.at("batch"), "1");
  EXPECT_DOUBLE_EQ(inner2[0].counts.at("tokens"), 20);
  EXPECT_EQ(inner2[0].labels.at("batch"), "2");
  EXPECT_DOUBLE_EQ(outer[0].counts.at("tokens"), 10);  // the unnamed count reached it; the named one did not
  EXPECT_EQ(outer[0].t_begin_ns, 2'000'000'000);
  EXPECT_EQ(outer[0].t_end_ns, 2'700'000'000);
}

TEST(MarksCollector, SameNameNestedClosesInnermostFirst) {
  MarkCollector c(kStart);
  c.feed(line("open", R"(,"name":"w","t_ns":2000000000)"), 2'000'000'000);
  c.feed(line("open", R"(,"name":"w","t_ns":2100000000)"), 2'100'000'000);
  auto a = c.feed(line("close", R"(,"name":"w","t_ns":2200000000)"), 2'200'000'000);
  auto b = c.feed(line("close", R"(,"name":"w","t_ns":2300000000)"), 2'300'000'000);
  EXPECT_EQ(a.at(0).t_begin_ns, 2'100'000'000);
  EXPECT_EQ(b.at(0).t_begin_ns, 2'000'000'000);
}

TEST(MarksCollector, MalformedLinesAreCountedNeverFatal) {
  MarkCollector c(kStart);
  c.feed("garbage", 2'000'000'000);
  c.feed("", 2'000'000'000);       // blank lines are not lines
  c.feed("   \r", 2'000'000'000);
  c.feed(line("close", R"(,"name":"never"})"), 2'000'000'000);
  c.feed(line("close", R"(,"name":"never")"), 2'000'000'000);  // close of a window that is not open
  c.feed(line("count", R"(,"counts":{"tokens":1})"), 2'000'000'000);  // nothing open
  c.feed(line("open", R"(,"name":"x","t_ns":2000000000)"), 2'000'000'000);
  c.feed(line("close", R"(,"name":"x","t_ns":1900000000)"), 2'000'000'000);  // before its open
  c.feed(line("tag", R"(,"name":"nope","tags":{"a":"b"})"), 2'000'000'000);
  auto done = c.feed(line("close", R"(,"name":"x","t_ns":2100000000)"), 2'100'000'000);
  EXPECT_EQ(done.size(), 1u);  // the good lines around the bad ones still count
  EXPECT_EQ(c.report().lines, 8u);
  EXPECT_EQ(c.report().malformed, 6u);
  ASSERT_EQ(c.report().malformed_examples.size(), 5u);  // the first five are kept
  EXPECT_EQ(c.report().malformed_examples[0].rfind("line 1: ", 0), 0u) << c.report().malformed_examples[0];
  EXPECT_NE(c.report().malformed_examples[2].find("not open"), std::string::npos);
  const auto tags = c.report().as_run_tags();
  EXPECT_EQ(tags.at("marks.malformed"), "6");
  EXPECT_EQ(tags.at("marks.lines"), "8");
  EXPECT_NE(tags.at("marks.malformed_first").find("line 1"), std::string::npos);
}

// Each count is finite, but their sum need not be: a line that would make a window's count
// infinite is rejected and the window keeps its sum (fuzz/fuzz_marks.cpp checks that every
// count is finite; the input is in its corpus as crash-count-sum-past-double-range).
TEST(MarksCollector, CountsThatWouldAddUpPastDoubleRangeAreRejected) {
  MarkCollector c(kStart);
  c.feed(line("open", R"(,"name":"a","counts":{"tokens":1.5e308})"), 2'000'000'000);
  c.feed(line("open", R"(,"name":"b")"), 2'000'000'000);
  c.feed(line("count", R"(,"name":"a","counts":{"tokens":1e308})"), 2'000'000'000);
  c.feed(line("count", R"(,"counts":{"tokens":1e308})"), 2'000'000'000);  // to every open window: none gets it
  c.feed(line("count", R"(,"counts":{"tokens":2})"), 2'000'000'000);
  auto b = c.feed(line("close", R"(,"name":"b","counts":{"tokens":1})"), 2'100'000'000);
  auto a = c.feed(line("close", R"(,"name":"a","counts":{"tokens":1.7e308})"), 2'100'000'000);
  EXPECT_TRUE(a.empty());  // rejected: a stays open
  EXPECT_EQ(c.report().malformed, 3u);
  EXPECT_EQ(c.report().malformed_examples[0],
            "line 3: count 'tokens' of window 'a' would add up past 1.5e+308");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_DOUBLE_EQ(b[0].counts.at("tokens"), 3);
  a = c.finish(3'000'000'000);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_DOUBLE_EQ(a[0].counts.at("tokens"), 1.5e308 + 2);
}

TEST(MarksCollector, WindowsLeftOpenAreClosedAtExitAndFlagged) {
  MarkCollector c(kStart);
  c.feed(line("tag", R"(,"tags":{"model":"m"})"), 1'500'000'000);
  c.feed(line("open", R"(,"name":"a","t_ns":2000000000)"), 2'000'000'000);
  c.feed(line("open", R"(,"name":"b","t_ns":2100000000)"), 2'100'000'000);
  c.feed(line("count", R"(,"name":"b","counts":{"tokens":7})"), 2'200'000'000);
  auto rest = c.finish(5'000'000'000);
  ASSERT_EQ(rest.size(), 2u);
  for (const auto& w : rest) {
    EXPECT_EQ(w.t_end_ns, 5'000'000'000);
    EXPECT_TRUE(w.labels.count(kLabelUnclosed)) << w.name;
  }
  EXPECT_DOUBLE_EQ(rest[1].counts.at("tokens"), 7);
  EXPECT_EQ(c.report().unclosed, 2u);
  EXPECT_EQ(c.open_windows(), 0u);
  const auto tags = c.report().as_run_tags();
  EXPECT_EQ(tags.at("model"), "m");
  EXPECT_EQ(tags.at("marks.unclosed"), "2");
  EXPECT_EQ(tags.at("marks.windows"), "2");
}

// The pipe: lines split across reads, a last line without newline, an over-long line.
TEST(MarkChannel, SplitsLinesAndDrainsAfterTheWriterIsDone) {
  auto ch = MarkChannel::create();
  ASSERT_TRUE(ch) << ch.error().message();
  std::vector<std::string> lines;
  VirtualClock clock(kStart);
  const int fd = (*ch)->write_fd();
  const std::string part1 = "{\"op\":\"open\",\"na", part2 = "me\":\"a\"}\n{\"op\":\"close\",\"name\":\"a\"}\n";
  const std::string longline = std::string(kMaxLineBytes + 10, 'x') + "\n";
  ASSERT_EQ(::write(fd, part1.data(), part1.size()), static_cast<ssize_t>(part1.size()));
  ASSERT_EQ(::write(fd, part2.data(), part2.size()), static_cast<ssize_t>(part2.size()));
  (*ch)->start(clock, [&](std::string_view l, int64_t t) {
    lines.emplace_back(l);
    EXPECT_EQ(t, kStart);
  });
  // The pipe holds 64 KiB: write the long line from another thread while the reader drains it.
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < longline.size()) done += static_cast<std::size_t>(::write(fd, longline.data() + done, longline.size() - done));
    const std::string tail = "{\"op\":\"tag\",\"tags\":{\"k\":\"v\"}}";  // no newline: handed over at stop
    (void)::write(fd, tail.data(), tail.size());
  });
  writer.join();
  (*ch)->stop();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "{\"op\":\"open\",\"name\":\"a\"}");
  EXPECT_EQ(lines[1], "{\"op\":\"close\",\"name\":\"a\"}");
  EXPECT_GT(lines[2].size(), kMaxLineBytes);  // handed over once, so the parser counts it malformed
  EXPECT_FALSE(parse_mark(lines[2]));
  EXPECT_EQ(lines[3], "{\"op\":\"tag\",\"tags\":{\"k\":\"v\"}}");
  EXPECT_NE((*ch)->env_entry().find("WATTLAB_MARKS_FD="), std::string::npos);
}

// The header-only client writes lines the parser accepts, stamped on CLOCK_MONOTONIC.
TEST(MarksClient, WritesTheProtocol) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  Client cl(fds[1]);
  const int64_t before = MonotonicClock::instance().now_ns();
  {
    Window w("decode \"b8\"\n", {{"batch", "8"}}, cl);
    w.count({{"tokens", 256}});
    w.count({{"tokens", 256}, {"requests", 8}});
    cl.count("", {{"images", 1.5}});
  }
  cl.tag({{"model", "llama-8b"}});
  ::close(fds[1]);
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  const int64_t after = MonotonicClock::instance().now_ns();
  MarkCollector c(before);
  std::vector<MarkedWindow> done;
  std::size_t start = 0, nl;
  while ((nl = all.find('\n', start)) != std::string::npos) {
    for (auto& w : c.feed(std::string_view(all).substr(start, nl - start), after)) done.push_back(std::move(w));
    start = nl + 1;
  }
  EXPECT_EQ(c.report().malformed, 0u) << (c.report().malformed_examples.empty() ? "" : c.report().malformed_examples[0]);
  EXPECT_EQ(c.report().lines, 4u);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].name, "decode \"b8\"\n");  // escaped and back
  EXPECT_DOUBLE_EQ(done[0].counts.at("tokens"), 512);
  EXPECT_DOUBLE_EQ(done[0].counts.at("requests"), 8);
  EXPECT_DOUBLE_EQ(done[0].counts.at("images"), 1.5);
  EXPECT_EQ(done[0].labels.at("batch"), "8");
  EXPECT_EQ(done[0].labels.at(kLabelTimeSource), "client");
  EXPECT_GE(done[0].t_begin_ns, before);
  EXPECT_LE(done[0].t_end_ns, after);
  EXPECT_LE(done[0].t_begin_ns, done[0].t_end_ns);
  EXPECT_EQ(c.report().run_tags.at("model"), "llama-8b");
}

TEST(MarksClient, NoOpWithoutTheVariable) {
  ::unsetenv("WATTLAB_MARKS_FD");
  EXPECT_FALSE(Client::from_env().enabled());
  ::setenv("WATTLAB_MARKS_FD", "x3", 1);
  EXPECT_FALSE(Client::from_env().enabled());
  ::setenv("WATTLAB_MARKS_FD", "7", 1);
  EXPECT_TRUE(Client::from_env().enabled());
  ::unsetenv("WATTLAB_MARKS_FD");
  Client off(-1);
  EXPECT_FALSE(off.open("a"));
  EXPECT_FALSE(off.close("a", {{"tokens", 1}}));
}

// Marks become meter windows with explicit edges: energy over exactly their interval.
TEST(MarksMeter, MarkedWindowsGetTheEnergyOfTheirInterval) {
  wattlab::testing::SimMeter m(wattlab::testing::exact_board("step 100W 2s; step 400W 4s; step 100W 10s"));
  const int64_t t0 = m.t0();
  MarkCollector c(t0);
  auto at = [&](double s) { return t0 + wattlab::testing::SimMeter::s_to_ns(s); };
  std::vector<std::pair<WindowId, MarkedWindow>> ws;
  auto feed = [&](const std::string& l, double arrive_s) {
    m.meter->advance_to(at(arrive_s));
    for (auto& w : c.feed(l, at(arrive_s))) ws.emplace_back(m.meter->add_window(w.name, w.t_begin_ns, w.t_end_ns), w);
  };
  feed(line("open", ",\"name\":\"hot\",\"t_ns\":" + std::to_string(at(2.5))), 2.5);
  feed(line("close", ",\"name\":\"hot\",\"t_ns\":" + std::to_string(at(5.5)) + ",\"counts\":{\"tokens\":3000}"), 5.6);
  m.meter->advance_to(at(9));
  ASSERT_EQ(ws.size(), 1u);
  const WindowResult r = m.meter->wait_result(ws[0].first);
  ASSERT_TRUE(r.final);
  ASSERT_TRUE(r.domains.at(0).available);
  EXPECT_EQ(r.t_begin_ns, at(2.5));
  EXPECT_EQ(r.t_end_ns, at(5.5));
  const double truth = m.truth(r);
  EXPECT_NEAR(truth, 400.0 * 3.0, 40.0);  // the true trace: ~400 W for 3 s (edges take a few ms)
  EXPECT_NEAR(r.domains[0].energy_j, truth, r.domains[0].uncertainty_j + 1e-9);
  EXPECT_NEAR(r.domains[0].energy_j / ws[0].second.counts.at("tokens"), 0.4, 0.4 * 0.05);
}
