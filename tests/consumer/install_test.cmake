# CTest install.consumer_project: installs wattlab's build into a fresh prefix, checks what was
# installed (the binary, libwattlab.so, the package files, exactly the umbrella's header closure),
# that docs/install.md lists those headers and include/ holds no other, then configures, builds and runs tests/consumer against that prefix as an outside project.
# cmake -DBUILD_DIR=<wattlab build> -DLIBDIR=<its CMAKE_INSTALL_LIBDIR> -DCONSUMER_DIR=<tests/consumer> -DDOC=<docs/install.md> -DWORK_DIR=<scratch>
#       -DCXX=<C++ compiler> -DCC=<C compiler> -DGENERATOR=<generator> -P install_test.cmake
# and the build's CXX_FLAGS, C_FLAGS, EXE_LINKER_FLAGS, so that the consumer links a sanitized
# build's libraries with the same sanitizers (the asan preset).
foreach(var BUILD_DIR LIBDIR CONSUMER_DIR DOC WORK_DIR CXX CC GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(file bin/wattlab ${LIBDIR}/libwattlab.so ${LIBDIR}/cmake/wattlab/wattlabConfig.cmake
        ${LIBDIR}/cmake/wattlab/wattlabConfigVersion.cmake
        ${LIBDIR}/cmake/wattlab/wattlabTargets.cmake
        include/wattlab/wattlab.h include/wattlab/wattlab_c.h)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install_test: ${file} was not installed")
  endif()
endforeach()
run_step("the installed wattlab --version" ${prefix}/bin/wattlab --version)

# The installed headers are the umbrella's closure, no more, no less (and wattlab_c.h for the C API).
run_step("the header closure of wattlab.h" ${CXX} -std=c++20 -MM -I${prefix}/include ${prefix}/include/wattlab/wattlab.h)
string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" prefix_re "${prefix}")
string(REGEX MATCHALL "${prefix_re}/include/[^ \t\r\n\\\\]+\\.h" reached "${step_output}")
list(TRANSFORM reached REPLACE "^${prefix_re}/include/" "")
list(APPEND reached wattlab/wattlab_c.h)
list(REMOVE_DUPLICATES reached)
list(SORT reached)
file(GLOB_RECURSE installed RELATIVE ${prefix}/include ${prefix}/include/*)
list(SORT installed)
string(REPLACE ";" "\n  " installed_text "${installed}")
if(NOT installed STREQUAL reached)
  string(REPLACE ";" "\n  " reached_text "${reached}")
  message(FATAL_ERROR "install_test: installed headers differ from wattlab.h's closure.\n"
                      "installed:\n  ${installed_text}\nreached from wattlab/wattlab.h:\n  ${reached_text}")
endif()
list(LENGTH installed header_count)

# docs/install.md's table of public headers names the same set.
file(READ ${DOC} doc_text)
string(REGEX MATCHALL "`include/wattlab/[^`]+\\.h`" documented "${doc_text}")
list(TRANSFORM documented REPLACE "^`include/(.*)`$" "\\1")
list(REMOVE_DUPLICATES documented)
list(SORT documented)
if(NOT documented STREQUAL installed)
  string(REPLACE ";" "\n  " documented_text "${documented}")
  message(FATAL_ERROR "install_test: ${DOC} lists other headers than are installed.\n"
                      "listed:\n  ${documented_text}\ninstalled:\n  ${installed_text}")
endif()

# The source tree's include/ holds only the public headers: every internal one lives next to its
# sources under src/<layer>/ (docs/architecture.md).
get_filename_component(source_docs_dir ${DOC} DIRECTORY)
get_filename_component(source_dir ${source_docs_dir} DIRECTORY)
file(GLOB_RECURSE in_tree RELATIVE ${source_dir}/include ${source_dir}/include/*)
list(SORT in_tree)
if(NOT in_tree STREQUAL installed)
  string(REPLACE ";" "\n  " in_tree_text "${in_tree}")
  message(FATAL_ERROR "install_test: include/ holds other headers than the public ones "
                      "(internal headers belong next to their sources under src/<layer>/).\n"
                      "in include/:\n  ${in_tree_text}\ninstalled:\n  ${installed_text}")
endif()

run_step("configuring the consumer project" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
         -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_C_FLAGS=${C_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
run_step("building the consumer project" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("the consumer program" ${WORK_DIR}/build/wattlab_consumer)
if(NOT step_output MATCHES "SIMULATED")
  message(FATAL_ERROR "install_test: the consumer did not report a SIMULATED window:\n${step_output}")
endif()
set(cpp_output "${step_output}")
run_step("the C consumer program" ${WORK_DIR}/build/wattlab_c_consumer)
message(STATUS "install_test: ${header_count} headers installed; ${cpp_output}${step_output}")
file(REMOVE_RECURSE ${WORK_DIR})
