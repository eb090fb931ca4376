// What every fuzz target shares: a check that stops the run with a message when a parser breaks a
// property it promises, so libFuzzer saves the input as a crash.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace wattlab::fuzz {

// Aborts with `what` when `ok` is false; libFuzzer writes the input to crash-<sha1>.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace wattlab::fuzz
