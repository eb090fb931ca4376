#!/usr/bin/env bash
# The whole test suite on a fresh machine: dependencies, build (warnings as errors), CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci "$@"
