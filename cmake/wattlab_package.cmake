# What the .deb adds to `cmake --install` (docs/install.md, "The portable build and the .deb"): man pages generated from
# the CLI's help, the Python package, the systemd unit for `wattlab serve`; and the CPack settings
# that make the .deb (`cpack --preset portable`, scripts/package-check.sh).

# Man pages: help2man over `wattlab --help` and each subcommand's --help, written at build time by
# cmake/wattlab_man.cmake into <build>/man/. Without help2man there are none, and a warning says so.
find_program(WATTLAB_HELP2MAN help2man)
if(WATTLAB_HELP2MAN)
  set(WATTLAB_MAN_DIR ${PROJECT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${WATTLAB_MAN_DIR}/wattlab.1
    COMMAND ${CMAKE_COMMAND} -DWATTLAB_BIN=$<TARGET_FILE:wattlab> -DHELP2MAN=${WATTLAB_HELP2MAN}
            -DOUT_DIR=${WATTLAB_MAN_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/wattlab_man.cmake
    DEPENDS wattlab ${PROJECT_SOURCE_DIR}/cmake/wattlab_man.cmake
    COMMENT "Man pages from wattlab --help (help2man)")
  add_custom_target(wattlab_man ALL DEPENDS ${WATTLAB_MAN_DIR}/wattlab.1)
  install(DIRECTORY ${WATTLAB_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
else()
  message(WARNING "wattlab: help2man not found, so no man pages (scripts/install-deps.sh installs it)")
endif()

# The Python package (docs/python.md) where Debian's and Ubuntu's python3 look: it finds
# libwattlab.so.1 through the dynamic loader's search path.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/wattlab DESTINATION lib/python3/dist-packages
  PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "libwattlab.so*" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/python/wattlab_marks.py DESTINATION lib/python3/dist-packages)

# The systemd unit (docs/deploy.md, "systemd"); its ExecStart is /usr/bin/wattlab, where the .deb
# puts the binary (CPACK_PACKAGING_INSTALL_PREFIX below).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/wattlab-serve.service DESTINATION lib/systemd/system)

# The .deb, made from the portable build (docs/install.md). Depends names glibc and, for
# libwattlab.so (the `wattlab` executable carries its own C++ runtime), libstdc++6 of GCC 11 or
# newer (GLIBCXX_3.4.29).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wattlab)
set(CPACK_PACKAGE_VENDOR wattlab)
set(CPACK_PACKAGE_CONTACT "wattlab maintainers <wattlab@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU energy measurement: CLI, Prometheus exporter, C/C++ and Python APIs")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The newest glibc symbol version the binaries need (docs/install.md, "The glibc floor");
# scripts/package-check.sh checks the binaries against the Depends it gives, with objdump.
set(WATTLAB_GLIBC_FLOOR "2.36")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${WATTLAB_GLIBC_FLOOR}), libstdc++6 (>= 11)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_STRIP_FILES ON)
include(CPack)
