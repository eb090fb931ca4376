# The portable build (-DWATTLAB_PORTABLE=ON, preset `portable`, docs/install.md): `wattlab` needs
# nothing at run time beyond glibc (libc, libm, ld-linux), and libwattlab.so only glibc and the C++
# runtime, so that binaries built on Debian bookworm run on other distributions. Included before
# the dependencies are found: it puts each library that other distributions lack or version
# differently in its header-only or static form under the target name the layers already link.
#   fmt         header-only (FMT_HEADER_ONLY): fmt::fmt is defined here as an INTERFACE target;
#               fmt's own targets file then sees both of its targets defined and keeps them.
#   cpp-httplib header-only (third_party/cpp-httplib, the same 0.11.4 as Debian's split library):
#               a generated cpp-httplib.pc, first on PKG_CONFIG_PATH, names it; static zlib
#               (gzip responses) follows the layers that use it (wattlab_portable_targets).
#               No OpenSSL and no Brotli: https URLs are refused.
#   sqlite3     the static archive (libsqlite3.a, position-independent, so libwattlab.so takes it too).
#   libstdc++, libgcc   static in the `wattlab` executable (-static-libstdc++ -static-libgcc), so the
#               C++ runtime's version is no floor; libwattlab.so keeps the system's (a C API).
# glibc stays dynamic: its floor is the newest GLIBC_ symbol version the binaries use, which
# scripts/package-check.sh reads with objdump and compares with the .deb's libc6 Depends
# (cmake/wattlab_package.cmake).

find_package(Threads REQUIRED)

# fmt
find_path(WATTLAB_FMT_INCLUDE_DIR fmt/format.h REQUIRED)
foreach(fmt_target fmt::fmt fmt::fmt-header-only)
  add_library(${fmt_target} INTERFACE IMPORTED)
  set_target_properties(${fmt_target} PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1"
    INTERFACE_INCLUDE_DIRECTORIES "${WATTLAB_FMT_INCLUDE_DIR}")
endforeach()

# cpp-httplib
find_library(WATTLAB_ZLIB_STATIC NAMES libz.a REQUIRED)
set(WATTLAB_HTTPLIB_DIR "${PROJECT_SOURCE_DIR}/third_party/cpp-httplib")
set(WATTLAB_PKGCONFIG_DIR "${PROJECT_BINARY_DIR}/portable-pkgconfig")
file(WRITE "${WATTLAB_PKGCONFIG_DIR}/cpp-httplib.pc" "\
Name: cpp-httplib
Description: cpp-httplib header-only (third_party/cpp-httplib), for the portable build
Version: 0.11.4
Libs: -pthread
Cflags: -I${WATTLAB_HTTPLIB_DIR} -DCPPHTTPLIB_ZLIB_SUPPORT
")
set(ENV{PKG_CONFIG_PATH} "${WATTLAB_PKGCONFIG_DIR}:$ENV{PKG_CONFIG_PATH}")

# sqlite3: FindSQLite3 keeps a library already in the cache and an SQLite::SQLite3 already defined.
find_library(SQLite3_LIBRARY NAMES libsqlite3.a REQUIRED)
find_package(SQLite3 REQUIRED)
set_property(TARGET SQLite::SQLite3 APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads ${CMAKE_DL_LIBS} m)

# Called once the targets exist. pkg-config's Libs take no archive path, so the static zlib is
# linked after the layers that compile cpp-httplib's gzip code; the C++ runtime goes static into
# the executable.
function(wattlab_portable_targets executable)
  foreach(layer wattlab_export wattlab_infer)
    if(TARGET ${layer})
      target_link_libraries(${layer} INTERFACE ${WATTLAB_ZLIB_STATIC})
    endif()
  endforeach()
  target_link_options(${executable} PRIVATE -static-libstdc++ -static-libgcc)
endfunction()
