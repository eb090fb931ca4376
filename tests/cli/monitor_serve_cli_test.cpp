// End-to-end: `wattlab monitor --jsonl` on the sim's virtual clock, SIGINT exits 0, and
// `wattlab serve` usage errors and its non-loopback warning, as a user runs them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "shell.h"

namespace {

using wattlab::testing::shell;
using wattlab::testing::wattlab_bin;

TEST(MonitorCli, JsonlOnTheVirtualClockFollowsTheSimulatedTruth) {
  // 2 s of virtual time in 0.25 s updates: 8 lines, deterministic, no real waiting.
  const auto r = shell(wattlab_bin() + " monitor --device sim --sim-workload 'step 300W 60s' --sim-gain-error 0 "
                       "--virtual-clock --duration-s 2 --interval-ms 250 --jsonl");
  ASSERT_EQ(r.rc, 0) << r.out;
  std::istringstream in(r.out);
  std::string line;
  int n = 0;
  double prev_e = -1;
  while (std::getline(in, line)) {
    if (line.rfind("{", 0) != 0) {  // stderr (merged by shell()): the SIMULATED banner
      EXPECT_TRUE(line.rfind("wattlab monitor: SIMULATED", 0) == 0 || line.rfind("  loaded sim", 0) == 0) << line;
      continue;
    }
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["schema"], "wattlab.monitor/1");
    EXPECT_EQ(j["seq"], n);
    EXPECT_NEAR(j["t_s"].get<double>(), 0.25 * (n + 1), 1e-9);
    EXPECT_TRUE(j["simulated"].get<bool>());
    const auto& d = j["domains"].at(0);
    EXPECT_EQ(d["domain"], "gpu:0");
    EXPECT_TRUE(d["simulated"].get<bool>());
    const double e = d["energy_j"].get<double>();
    EXPECT_GE(e, prev_e);
    prev_e = e;
    EXPECT_NEAR(d["power_instant_w"].get<double>(), 300, 5);  // 1 W noise per reading
    if (n == 0) {
      EXPECT_TRUE(d["power_interval_w"].is_null()) << "no interval before the second update";
    } else {
      // Mean power between updates from the energy timeline: the board draws exactly 300 W.
      EXPECT_NEAR(d["power_interval_w"].get<double>(), 300, 6) << line;
    }
    EXPECT_EQ(d["read_errors"], 0);
    ++n;
  }
  EXPECT_EQ(n, 8) << r.out;
}

// The JSON lines of an output (stderr is merged into it by shell()).
std::string json_lines(const std::string& out) {
  std::istringstream in(out);
  std::string line, lines;
  while (std::getline(in, line))
    if (line.rfind("{", 0) == 0) lines += line + "\n";
  return lines;
}

// --format json (and its shorthand --json) is --jsonl: the same lines, byte for byte.
TEST(MonitorCli, FormatJsonIsJsonLines) {
  const std::string base = wattlab_bin() + " monitor --device sim --sim-workload 'step 300W 60s' --virtual-clock "
                                           "--duration-s 1 --interval-ms 250";
  const auto jsonl = shell(base + " --jsonl");
  ASSERT_EQ(jsonl.rc, 0) << jsonl.out;
  const std::string lines = json_lines(jsonl.out);
  ASSERT_EQ(lines.rfind("{\"schema\":\"wattlab.monitor/1\"", 0), 0u) << jsonl.out;
  for (const char* flag : {" --format json", " --json", " --jsonl --format json"}) {
    const auto r = shell(base + flag);
    ASSERT_EQ(r.rc, 0) << flag << r.out;
    EXPECT_EQ(json_lines(r.out), lines) << flag;
  }
  EXPECT_EQ(json_lines(shell(base).out), "");
  EXPECT_EQ(shell(base + " --jsonl --format text").rc, 2);
  EXPECT_EQ(shell(base + " --format md").rc, 2);
}

TEST(MonitorCli, PlainLinesSaySimulatedAndUnits) {
  const auto r = shell(wattlab_bin() + " monitor --device sim --sim-workload 'step 300W 60s' --virtual-clock "
                       "--duration-s 1 --interval-ms 500");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" W (mean since last update"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" J +-5% gain tolerance"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no ANSI codes when stdout is not a terminal";
}

TEST(MonitorCli, BadUsageExits2) {
  EXPECT_EQ(shell(wattlab_bin() + " monitor --device sim --virtual-clock --jsonl").rc, 2);  // no --duration-s
  EXPECT_EQ(shell(wattlab_bin() + " monitor --device nvml --virtual-clock --duration-s 1").rc, 2);
  EXPECT_EQ(shell(wattlab_bin() + " monitor --interval-ms 0").rc, 2);
}

// Starts `wattlab <args>` with stdout to a file; returns its pid.
pid_t spawn(const std::string& args, const std::string& out_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + wattlab_bin() + " " + args + " >" + out_path + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Waits (bounded, real time) until `path` contains `what`.
bool wait_for(const std::string& path, const std::string& what, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (slurp(path).find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int wait_exit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(MonitorCli, SigintExitsZeroCleanly) {
  const std::string out = "/tmp/wattlab-monitor-sigint-" + std::to_string(getpid()) + ".jsonl";
  const pid_t pid = spawn("monitor --device sim --jsonl --interval-ms 100", out);
  ASSERT_TRUE(wait_for(out, "\"seq\":1", std::chrono::seconds(20))) << slurp(out);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 0) << slurp(out);
  std::remove(out.c_str());
}

TEST(ServeCli, SigintExitsZeroAndNonLoopbackWarns) {
  const std::string out = "/tmp/wattlab-serve-" + std::to_string(getpid()) + ".log";
  const pid_t pid = spawn("serve --device sim --listen 0.0.0.0:0 --host-label n1", out);
  ASSERT_TRUE(wait_for(out, "listening on http://0.0.0.0:", std::chrono::seconds(20))) << slurp(out);
  EXPECT_NE(slurp(out).find("warning: listening on 0.0.0.0, which other machines can reach"), std::string::npos) << slurp(out);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 0) << slurp(out);
  std::remove(out.c_str());
}

TEST(ServeCli, LoopbackHasNoWarningAndBadUsageExits2) {
  const auto r = shell(wattlab_bin() + " serve --device sim --listen 127.0.0.1:0 --duration-s 0.3");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("listening on http://127.0.0.1:"), std::string::npos) << r.out;
  EXPECT_EQ(shell(wattlab_bin() + " serve --device sim --listen 127.0.0.1").rc, 2);
  EXPECT_EQ(shell(wattlab_bin() + " serve --device sim --listen 127.0.0.1:99999").rc, 2);
  EXPECT_EQ(shell(wattlab_bin() + " serve --device sim --token-file /nonexistent/token").rc, 2);
  EXPECT_EQ(shell(wattlab_bin() + " serve --device sim --http-timeout-s 0").rc, 2);
}

// An empty token is an error naming where it came from, never "serve without a token".
TEST(ServeCli, AnEmptyTokenExits2) {
  const std::string serve = wattlab_bin() + " serve --device sim --listen 127.0.0.1:0 --duration-s 0.3";
  for (const char* value : {"''", "'  '"}) {
    const auto r = shell("WATTLAB_SERVE_TOKEN=" + std::string(value) + " " + serve);
    EXPECT_EQ(r.rc, 2) << value << r.out;
    EXPECT_NE(r.out.find("$WATTLAB_SERVE_TOKEN"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("is empty: an empty bearer token would let anyone in"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  }
  const auto no_path = shell(serve + " --token-file ''");
  EXPECT_EQ(no_path.rc, 2) << no_path.out;
  EXPECT_NE(no_path.out.find("--token-file ''"), std::string::npos) << no_path.out;
  const std::string file = "/tmp/wattlab-serve-token-" + std::to_string(getpid());
  std::ofstream(file) << "ab\x01" "cd\n";
  const auto control = shell(serve + " --token-file " + file);
  EXPECT_EQ(control.rc, 2) << control.out;
  EXPECT_NE(control.out.find("control character"), std::string::npos) << control.out;
  std::ofstream(file) << "  s3cret \r\n";
  const auto ok = shell(serve + " --token-file " + file);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_NE(ok.out.find("bearer token required"), std::string::npos) << ok.out;
  std::remove(file.c_str());
  const auto env = shell("WATTLAB_SERVE_TOKEN=s3cret " + serve);
  EXPECT_EQ(env.rc, 0) << env.out;
  EXPECT_NE(env.out.find("bearer token required"), std::string::npos) << env.out;
}

}  // namespace
