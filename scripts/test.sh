#!/usr/bin/env bash
# The whole test suite on a fresh machine: dependencies, build (warnings as errors), CTest, then
# each parser's fuzz target for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci "$@"
# Every parser's libFuzzer target for a bounded time (docs/fuzzing.md); WATTLAB_FUZZ_SECONDS=0 skips it.
fuzz_seconds=${WATTLAB_FUZZ_SECONDS:-20}
if [ "$fuzz_seconds" != 0 ]; then
  ./scripts/fuzz.sh "$fuzz_seconds"
fi
