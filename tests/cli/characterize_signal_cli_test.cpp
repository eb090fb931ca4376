// End-to-end: Ctrl-C during `wattlab sensors --characterize` (real time, a fake powercap tree)
// ends the stored run with status 130 and what was read so far, and the process still ends by
// the signal. The signal is sent when wattlab says the idle phase began (not after a sleep).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/shell.h"

namespace {

namespace fs = std::filesystem;

void put(const fs::path& file, const std::string& content) {
  std::ofstream out(file, std::ios::trunc);
  out << content << "\n";
}

TEST(CharacterizeSignalCli, SigintEndsTheStoredRunWith130AndTheProcessByTheSignal) {
  const fs::path dir = fs::temp_directory_path() / ("wattlab-characterize-signal-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path zone = dir / "powercap" / "intel-rapl:0";
  fs::create_directories(zone);
  put(zone / "name", "package-0");
  put(zone / "max_energy_range_uj", "30000000");
  put(zone / "energy_uj", "1000");
  put(zone / "enabled", "1");
  const std::string db = (dir / "c.db").string();

  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDERR_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    const std::string bin = wattlab::testing::wattlab_bin(), root = (dir / "powercap").string();
    ::execl(bin.c_str(), bin.c_str(), "sensors", "--characterize", "--device", "rapl", "--powercap-root", root.c_str(),
            "--idle-s", "60", "--poll-s", "30", "--db", db.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* f = ::fdopen(out[0], "r");
  std::string seen;
  char line[4096];
  bool idle = false;
  while (!idle && std::fgets(line, sizeof line, f) != nullptr) {
    seen += line;
    idle = std::string(line).find("idle: cpu:0/package") != std::string::npos;
  }
  ASSERT_TRUE(idle) << seen;
  ::kill(pid, SIGINT);
  while (std::fgets(line, sizeof line, f) != nullptr) seen += line;
  std::fclose(f);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st)) << seen;
  EXPECT_EQ(WTERMSIG(st), SIGINT);

  const auto rep = wattlab::testing::shell(wattlab::testing::wattlab_bin() + " report latest --db " + db);
  EXPECT_EQ(rep.rc, 0) << rep.out;
  EXPECT_NE(rep.out.find("(complete): wattlab sensors --characterize"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("exit status 130"), std::string::npos) << rep.out;
  fs::remove_all(dir);
}

}  // namespace
