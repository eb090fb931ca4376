#!/usr/bin/env bash
# Installs wattlab's build and test dependencies from Debian bookworm packages.
# Idempotent: packages already present are skipped, so repeated runs are quick.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config git
      libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev sqlite3 libcpp-httplib-dev libeigen3-dev
      libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev python3 python3-pytest python3-yaml python3-aiohttp gnuplot-nox prometheus chromium
      help2man zlib1g-dev
      ${WATTLAB_EXTRA_PACKAGES:-})
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
