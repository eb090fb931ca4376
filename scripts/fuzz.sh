#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset, or FUZZ_PRESET: clang, ASan + UBSan) and runs each one for a
# bounded time over its seed corpus fuzz/corpus/<target>/ (docs/fuzzing.md). Fails when any target
# finds a crash, a sanitizer report, a leak, a broken property or an input slower than 10 s; the
# input is then in build/<preset>/artifacts/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (20)] [TARGET ...]   (default: every fuzz/fuzz_*.cpp)
# FUZZ_JOBS targets run at once (default: the number of cores). New inputs a run finds go to a
# scratch directory: the committed corpus changes only by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
[ $# -gt 0 ] && shift
# libFuzzer reads -max_total_time=0 as "no limit": at least 1 s.
case "$seconds" in '' | *[!0-9]* | 0) echo "fuzz.sh: seconds per target must be a whole number >= 1, got '$seconds'" >&2; exit 2 ;; esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.cpp; do t=${f#fuzz/fuzz_}; targets+=("${t%.cpp}"); done
fi
for t in "${targets[@]}"; do
  [ -f "fuzz/fuzz_$t.cpp" ] || { echo "fuzz.sh: no target '$t' (fuzz/fuzz_$t.cpp)" >&2; exit 2; }
  [ -d "fuzz/corpus/$t" ] || { echo "fuzz.sh: target '$t' has no seed corpus fuzz/corpus/$t/" >&2; exit 2; }
done
jobs=${FUZZ_JOBS:-$(nproc)}

# FUZZ_PRESET names a configure preset with WATTLAB_FUZZ=ON and clang's sanitizers: `fuzz` (alone)
# or `ci` (scripts/test.sh: the targets come with the test build).
preset=${FUZZ_PRESET:-fuzz}
cmake --preset "$preset" >/dev/null
cmake --build "build/$preset" --target fuzzers

bin=build/$preset/fuzz
artifacts=build/$preset/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

run_one() {
  local t=$1
  mkdir -p "$scratch/$t"
  # Extra seed folders (fuzz/targets.cmake, WATTLAB_FUZZ_SEEDS_<target>): read, never written.
  local extra
  extra=$(sed -n "s/^set(WATTLAB_FUZZ_SEEDS_$t \(.*\))\$/\1/p" fuzz/targets.cmake)
  # shellcheck disable=SC2086  # a space-separated list of folders
  "$bin/fuzz_$t" "$scratch/$t" "fuzz/corpus/$t" $extra -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$t-" -print_final_stats=1 >"$scratch/$t.log" 2>&1
}

start=$(date +%s)
declare -A pid_of
failed=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
  run_one "$t" &
  pid_of[$t]=$!
done
for t in "${targets[@]}"; do
  if wait "${pid_of[$t]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
    echo "fuzz $t: ok, ${runs:-?} inputs in ${seconds} s"
  else
    failed+=("$t")
    echo "fuzz $t: FAILED; the log ends:"
    tail -n 40 "$scratch/$t.log"
  fi
done
echo "fuzz: ${#targets[@]} targets, ${#failed[@]} failed, $(($(date +%s) - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: the inputs are in $artifacts/ (rerun one: $bin/fuzz_<target> <file>; docs/fuzzing.md)" >&2
  exit 1
fi
