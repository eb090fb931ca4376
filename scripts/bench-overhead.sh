#!/usr/bin/env bash
# Builds (release preset) and runs the meter overhead benchmarks, and prints what
# docs/results/overhead.md needs: machine, load, commands and their output.
#   scripts/bench-overhead.sh [SECONDS]     SECONDS: sampler run length, default 60
# Takes about SECONDS + 60 s (plus the build). Runs on the sim device only (SIMULATED H200 read
# costs), no GPU needed; on a GPU host the numbers are still the sim's.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target bench_meter_window bench_sampler_cpu
bin=build/release/benchmarks
echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "== cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "== build: release preset (CMAKE_BUILD_TYPE=Release)"
echo "== load before sampler run (/proc/loadavg): $(cat /proc/loadavg)"
echo "== command: $bin/bench_sampler_cpu --seconds $secs"
rc=0
"$bin/bench_sampler_cpu" --seconds "$secs" || rc=$?
echo "== bench_sampler_cpu exit status: $rc (0 PASS, 1 FAIL)"
echo "== load before window benchmark (/proc/loadavg): $(cat /proc/loadavg)"
args=(--benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2)
echo "== command: $bin/bench_meter_window ${args[*]}"
"$bin/bench_meter_window" "${args[@]}"
echo "== load after (/proc/loadavg): $(cat /proc/loadavg)"
