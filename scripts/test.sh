#!/usr/bin/env bash
# The whole test suite on a fresh machine: dependencies, one build (clang at -O1 with ASan + UBSan,
# warnings as errors: the tests and the libFuzzer targets) and every test under those sanitizers; the
# tests labelled threads again under ThreadSanitizer; then each parser's fuzz target for a bounded
# time. Arguments go to the first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci "$@"
# ThreadSanitizer over the tests labelled threads (the tsan preset builds only those);
# WATTLAB_TSAN=0 skips it. ASLR off (setarch -R): TSan's shadow memory needs the classic layout on
# kernels with more mmap randomisation than it knows.
if [ "${WATTLAB_TSAN:-1}" != 0 ]; then
  cmake --preset tsan
  cmake --build --preset tsan
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} setarch "$(uname -m)" -R ctest --preset tsan
fi
# Every parser's libFuzzer target for a bounded time (docs/fuzzing.md); WATTLAB_FUZZ_SECONDS=0 skips it.
fuzz_seconds=${WATTLAB_FUZZ_SECONDS:-20}
if [ "$fuzz_seconds" != 0 ]; then
  FUZZ_PRESET=ci ./scripts/fuzz.sh "$fuzz_seconds"
fi
