#!/usr/bin/env bash
# Builds the portable preset, makes the .deb with cpack, unpacks it into a fresh folder (dpkg -x,
# no root) and checks what docs/install.md promises:
#   - the package holds the binary, libwattlab.so, the public headers, the CMake package, the Python
#     package, the man pages and the systemd unit;
#   - no path into the checkout or the build is written in the binaries, and `wattlab --version`
#     and `wattlab sensors --device sim` run from the unpacked folder with the build moved away;
#   - the Python package loads the unpacked libwattlab.so through the loader's search path;
#   - ldd lists only glibc's libraries (libc, libm, ld-linux, libdl, libpthread, the vDSO) for
#     `wattlab`, and those plus libstdc++/libgcc_s for libwattlab.so;
#   - no binary needs a GLIBC_ symbol version newer than the package's libc6 Depends.
# Exit 0 when all hold, 1 naming the first that does not. BUILD_DIR overrides build/portable.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath -m "${BUILD_DIR:-build/portable}")
fail() { echo "package-check: FAIL: $*" >&2; exit 1; }

start_s=$(date +%s)
cmake --preset portable -B "$build" >/dev/null
cmake --build "$build" -j"${JOBS:-2}"
rm -f "$build"/wattlab_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/wattlab_*.deb)
echo "package-check: built $deb ($(( $(date +%s) - start_s )) s)"

root=$(mktemp -d)
hidden=""
cleanup() {
  [ -n "$hidden" ] && [ -d "$hidden" ] && mv "$hidden" "$build"
  rm -rf "$root"
}
trap cleanup EXIT
dpkg -x "$deb" "$root"
usr=$root/usr

# What the package holds.
for f in bin/wattlab lib/libwattlab.so.1 lib/libwattlab.so include/wattlab/wattlab.h include/wattlab/wattlab_c.h \
         lib/cmake/wattlab/wattlabConfig.cmake lib/cmake/wattlab/wattlabTargets.cmake \
         lib/python3/dist-packages/wattlab/__init__.py lib/python3/dist-packages/wattlab_marks.py \
         share/man/man1/wattlab.1 share/man/man1/wattlab-serve.1 share/man/man1/wattlab-sensors.1 \
         lib/systemd/system/wattlab-serve.service; do
  [ -e "$usr/$f" ] || fail "the package has no /usr/$f"
done
cmp -s "$usr/lib/systemd/system/wattlab-serve.service" deploy/systemd/wattlab-serve.service ||
  fail "the packaged unit differs from deploy/systemd/wattlab-serve.service"
man_pages=$(ls "$usr/share/man/man1" | wc -l)

# Dynamic dependencies: glibc alone for the binary; the C++ runtime besides for the library.
libs_of() { ldd "$1" | awk '{print $1}' | sed 's|.*/||'; }
glibc_re='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
extra=$(libs_of "$usr/bin/wattlab" | grep -Ev "$glibc_re" || true)
[ -z "$extra" ] || fail "wattlab needs more than glibc: $extra"
extra=$(libs_of "$usr/lib/libwattlab.so.1" | grep -Ev "$glibc_re" | grep -Ev '^(libstdc\+\+\.so\.6|libgcc_s\.so\.1)$' || true)
[ -z "$extra" ] || fail "libwattlab.so needs more than glibc and the C++ runtime: $extra"
echo "package-check: ldd wattlab: $(libs_of "$usr/bin/wattlab" | tr '\n' ' ')"
echo "package-check: ldd libwattlab.so.1: $(libs_of "$usr/lib/libwattlab.so.1" | tr '\n' ' ')"

# The glibc floor: the newest GLIBC_ version any binary asks for is at most the libc6 Depends.
floor=$(dpkg-deb -f "$deb" Depends | sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p')
[ -n "$floor" ] || fail "the package's Depends names no libc6 version: $(dpkg-deb -f "$deb" Depends)"
newest=$(objdump -T "$usr/bin/wattlab" "$usr/lib/libwattlab.so.1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
[ "$(printf '%s\n%s\n' "$newest" "$floor" | sort -V | tail -n 1)" = "$floor" ] ||
  fail "the binaries need GLIBC_$newest, newer than the package's libc6 (>= $floor)"
echo "package-check: glibc floor $floor (newest symbol version used: GLIBC_$newest)"

# No path into the checkout or the build is written in the binaries (a file read from there at run
# time would be missing on another machine).
src=$(pwd)
for f in "$usr/bin/wattlab" "$usr/lib/libwattlab.so.1"; do
  hits=$(strings "$f" | grep -F -e "$src" -e "$build" || true)
  [ -z "$hits" ] || fail "$f names a path in the checkout or the build: $(echo "$hits" | head -n 3)"
done

# Run from the unpacked folder with the build tree out of reach.
hidden=$(mktemp -d "$(dirname "$build")/.package-check-hidden.XXXXXX")
rmdir "$hidden"
mv "$build" "$hidden"
(cd "$root" && env -i PATH=/usr/bin:/bin "$usr/bin/wattlab" --version) | grep -q '^wattlab ' ||
  fail "wattlab --version printed no version"
sensors=$(cd "$root" && env -i PATH=/usr/bin:/bin "$usr/bin/wattlab" sensors --device sim) ||
  fail "wattlab sensors --device sim exited $?"
echo "$sensors" | grep -q sim || fail "wattlab sensors --device sim listed no simulated domain: $sensors"
if command -v python3 >/dev/null; then
  (cd "$root" && env -i PATH=/usr/bin:/bin PYTHONPATH="$usr/lib/python3/dist-packages" \
    LD_LIBRARY_PATH="$usr/lib" python3 -c '
import wattlab, wattlab._lib as lib
path = lib.library_path()
assert path == "libwattlab.so.1" or path.startswith("'"$usr"'"), path
print("package-check: python: wattlab loads", path, "C API version", wattlab.library_version())
') || fail "the packaged Python package did not load the packaged libwattlab.so"
fi
mv "$hidden" "$build"
hidden=""
echo "package-check: ok: $(basename "$deb"), $man_pages man pages, wattlab --version and sensors --device sim run from $root ($(( $(date +%s) - start_s )) s in all)"
