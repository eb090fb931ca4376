# `cmake --install`: the public C++ API as the package wattlab (find_package(wattlab) gives the
# target wattlab::wattlab), the C API (wattlab_c.h, libwattlab.so) and the `wattlab` binary.
# docs/install.md lists what is installed and why the other headers are not.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The C++ API: an INTERFACE target over the static layers its headers declare, each before the ones
# it uses (the order a static link needs). The layers are built position-independent, so a
# consumer's shared library may link them too.
set(WATTLAB_API_LAYERS record store meter sensors core)
add_library(wattlab_api INTERFACE)
add_library(wattlab::wattlab ALIAS wattlab_api)
set_target_properties(wattlab_api PROPERTIES EXPORT_NAME wattlab)
foreach(layer ${WATTLAB_API_LAYERS})
  target_link_libraries(wattlab_api INTERFACE wattlab::${layer})
  set_target_properties(wattlab_${layer} PROPERTIES EXPORT_NAME ${layer})
endforeach()
set_target_properties(wattlab_shared PROPERTIES EXPORT_NAME shared)
list(TRANSFORM WATTLAB_API_LAYERS PREPEND wattlab_ OUTPUT_VARIABLE wattlab_api_layer_targets)

# The public headers: wattlab/wattlab.h and the headers it includes, directly or not (the
# consumer project test, tests/consumer/, builds against these alone). The C API header stands
# apart: it is the one libwattlab.so serves.
set(WATTLAB_PUBLIC_HEADERS
  wattlab/wattlab.h
  wattlab/core/clock.h
  wattlab/core/error.h
  wattlab/sensors/reading.h
  wattlab/sensors/process_usage.h
  wattlab/sensors/sensor.h
  wattlab/sensors/registry.h
  wattlab/meter/estimator.h
  wattlab/meter/issue_code.h
  wattlab/meter/window.h
  wattlab/meter/meter.h
  wattlab/store/run_record.h
  wattlab/store/store.h
  wattlab/record/flusher.h
  wattlab/record/recording.h
  wattlab/marks.h
  wattlab/wattlab_c.h)
foreach(header ${WATTLAB_PUBLIC_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/include/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
endforeach()

install(TARGETS wattlab_api ${wattlab_api_layer_targets} wattlab_shared
  EXPORT wattlabTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS wattlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(WATTLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wattlab)
install(EXPORT wattlabTargets NAMESPACE wattlab:: FILE wattlabTargets.cmake DESTINATION ${WATTLAB_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wattlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/wattlabConfig.cmake INSTALL_DESTINATION ${WATTLAB_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/wattlabConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/wattlabConfig.cmake ${PROJECT_BINARY_DIR}/wattlabConfigVersion.cmake
  DESTINATION ${WATTLAB_CMAKE_DIR})
