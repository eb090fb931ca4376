// A `wattlab run` killed with SIGKILL keeps every marks window that closed before (windows are
// stored as their results become final, not at the end), and `wattlab report` gives the killed
// run's energy from its stored readings, marked provisional. Deterministic: the test waits on a
// marker file the command writes and on the store's own content, never on a duration.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/shell.h"
#include "wattlab/store/store.h"

extern char** environ;

namespace wattlab {
namespace {

using testing::shell;
using testing::wattlab_bin;

// Polls `done` every 20 ms; gives up after `limit` (a hang, not a timing assertion).
template <class F>
bool wait_for(F done, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::size_t stored_windows(const std::filesystem::path& db, const std::string& name) {
  auto s = Store::open(db, OpenMode::read_only);
  if (!s) return 0;
  auto id = s->latest_run_id();
  if (!id) return 0;
  auto r = s->load_run(*id);
  if (!r) return 0;
  std::size_t n = 0;
  for (const auto& w : r->windows) n += w.name == name && w.final;
  return n;
}

TEST(KillRunCli, ASigkilledRunKeepsItsClosedWindowsAndReportGivesItsEnergySoFar) {
  const std::string bin = wattlab_bin();
  if (bin.empty()) GTEST_SKIP() << "WATTLAB_BIN is not set (run through ctest)";
  const auto dir = std::filesystem::temp_directory_path() / ("wattlab-kill-run-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto db = dir / "k.db";
  const auto marker = dir / "closed";
  // Three windows closed, then the marker, then the command waits to be killed.
  std::string script;
  for (int i = 0; i < 3; ++i)
    script += "echo '{\"op\":\"open\",\"name\":\"step\"}' >&$WATTLAB_MARKS_FD; sleep 0.1; "
              "echo '{\"op\":\"close\",\"name\":\"step\"}' >&$WATTLAB_MARKS_FD; ";
  script += "touch " + marker.string() + "; exec sleep 600";
  std::vector<std::string> args{bin, "run", "--device", "sim", "--marks", "--db", db.string(), "--", "sh", "-c", script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: the kill takes the command along
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), nullptr, &attr, argv.data(), environ), 0);
  posix_spawnattr_destroy(&attr);

  const bool closed = wait_for([&] { return std::filesystem::exists(marker); });
  // Before the kill, while the run goes on: the closed windows reach the store.
  const bool stored = closed && wait_for([&] { return stored_windows(db, "step") == 3; });
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(closed) << "the command never wrote its marker";
  ASSERT_TRUE(stored) << "closed windows must be stored while the run goes on, not at its end";
  ASSERT_TRUE(WIFSIGNALED(status));

  EXPECT_EQ(stored_windows(db, "step"), 3u) << "what was stored survives the SIGKILL";
  const auto r = shell(bin + " report latest --format json --db " + db.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j.at("state"), "incomplete");
  bool so_far = false;
  for (const auto& w : j.at("windows")) {
    if (w.at("name") != "run so far") continue;
    so_far = true;
    EXPECT_FALSE(w.at("final").get<bool>()) << "provisional";
    ASSERT_FALSE(w.at("domains").empty());
    EXPECT_GT(w.at("domains")[0].at("energy_j").get<double>(), 0.0) << w.dump();
    EXPECT_GT(w.at("dur_s").get<double>(), 0.2) << "it spans the readings stored before the kill";
  }
  EXPECT_TRUE(so_far) << r.out;
  const auto text = shell(bin + " report latest --db " + db.string());
  EXPECT_NE(text.out.find("run so far"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(provisional)"), std::string::npos) << text.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattlab
