// Runs a command line as a user would (through /bin/sh, stderr merged into stdout) for the
// end-to-end tests of the built wattlab (CTest sets WATTLAB_BIN).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace wattlab::testing {

struct Ran {
  int rc = -1;  // the exit status; -1 if it did not exit normally
  std::string out;
};

inline Ran shell(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The built wattlab, or "" outside CTest.
inline std::string wattlab_bin() {
  const char* b = std::getenv("WATTLAB_BIN");
  return b == nullptr ? "" : b;
}

}  // namespace wattlab::testing
