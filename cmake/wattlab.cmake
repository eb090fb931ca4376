# The data the tests read (tests/data/*/README.md): inside the source tree, so a clone stands alone.
set(WATTLAB_TEST_DATA_DIR "${PROJECT_SOURCE_DIR}/tests/data")
# One function configures every library target the same way (include dirs, C++20, warnings).
function(wattlab_setup_target target)
  # include/ holds the public API (wattlab.h's closure, installed); src/ holds the internal headers next
  # to their sources, included as "<layer>/<name>.h" inside the build tree only.
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
    $<INSTALL_INTERFACE:include>)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_features(${target} PUBLIC cxx_std_20)
  wattlab_warnings(${target})
endfunction()

function(wattlab_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wno-missing-field-initializers>)
  if(WATTLAB_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# wattlab_add_library(<layer> SOURCES... [DEPS ...]) -> wattlab_<layer>, alias wattlab::<layer>
function(wattlab_add_library layer)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(wattlab_${layer} STATIC ${ARG_SOURCES})
  add_library(wattlab::${layer} ALIAS wattlab_${layer})
  set_target_properties(wattlab_${layer} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  wattlab_setup_target(wattlab_${layer})
  target_link_libraries(wattlab_${layer} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# wattlab_add_test(<source> LIBS ... [LABELS ...]): the CTest name follows the path under tests/.
function(wattlab_add_test source)
  cmake_parse_arguments(ARG "" "" "LIBS;LABELS" ${ARGN})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  string(REGEX REPLACE "\\.[^.]*$" "" name ${rel})
  string(REPLACE "/" "." name ${name})
  set(target test_${name})
  string(REPLACE "." "_" target ${target})
  add_executable(${target} ${source})
  wattlab_warnings(${target})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  if(WATTLAB_TEST_CXX_FLAGS)
    target_compile_options(${target} PRIVATE ${WATTLAB_TEST_CXX_FLAGS})
  endif()
  add_test(NAME ${name} COMMAND ${target})
  set(env "WATTLAB_TEST_DATA_DIR=${WATTLAB_TEST_DATA_DIR}")
  if(TARGET wattlab)
    list(APPEND env "WATTLAB_BIN=$<TARGET_FILE:wattlab>")
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" LABELS "${ARG_LABELS}")
  # The tests labelled threads are what the tsan preset builds (target threads_tests, tests/CMakeLists.txt).
  if("threads" IN_LIST ARG_LABELS)
    set_property(GLOBAL APPEND PROPERTY WATTLAB_THREADS_TESTS ${target})
  endif()
endfunction()
