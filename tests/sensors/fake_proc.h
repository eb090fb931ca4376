// Test helper: a fake /proc tree in a temporary folder, one process at a time.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wattlab::testing {

class FakeProc {
 public:
  FakeProc() {
    static int n = 0;
    root_ = std::filesystem::temp_directory_path() /
            ("wattlab_proc_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::create_directories(root_);
  }
  ~FakeProc() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeProc(const FakeProc&) = delete;
  FakeProc& operator=(const FakeProc&) = delete;

  // A process with its comm, parent, cgroup file text and environment (KEY=VALUE entries).
  void add(unsigned pid, unsigned ppid, const std::string& comm, const std::string& cgroup_text = "0::/user.slice\n",
           const std::vector<std::string>& env = {}) {
    const auto d = root_ / std::to_string(pid);
    std::filesystem::create_directories(d);
    std::ofstream(d / "comm") << comm << "\n";
    std::ofstream(d / "stat") << pid << " (" << comm << ") S " << ppid << " " << pid << " 0 0 -1 4194560\n";
    std::ofstream(d / "cgroup") << cgroup_text;
    std::ofstream e(d / "environ", std::ios::binary);
    for (const auto& kv : env) e << kv << '\0';
  }
  void remove(unsigned pid) { std::filesystem::remove_all(root_ / std::to_string(pid)); }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace wattlab::testing
