# Writes the man pages, in script mode (cmake -P): wattlab.1 from `wattlab --help`, and
# wattlab-<sub>.1 from `wattlab <sub> --help` for every subcommand that help lists.
# Inputs: WATTLAB_BIN (the built binary), HELP2MAN, OUT_DIR.
foreach(var WATTLAB_BIN HELP2MAN OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "wattlab_man.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})

execute_process(COMMAND ${WATTLAB_BIN} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "wattlab_man.cmake: ${WATTLAB_BIN} --help exited ${rc}")
endif()

# CLI11 lists the subcommands under "Subcommands:" (or "SUBCOMMANDS:"), one "  name  description" a line.
string(REPLACE ";" "," help "${help}")
string(REPLACE "\n" ";" lines "${help}")
set(in_list OFF)
set(subcommands "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[Ss][Uu][Bb][Cc][Oo][Mm][Mm][Aa][Nn][Dd][Ss]:")
    set(in_list ON)
  elseif(in_list AND line MATCHES "^  +([a-z][a-z0-9-]*)( +(.*))?$")
    list(APPEND subcommands "${CMAKE_MATCH_1}")
    set(desc_${CMAKE_MATCH_1} "${CMAKE_MATCH_3}")
  elseif(in_list AND NOT line MATCHES "^ ")
    set(in_list OFF)
  endif()
endforeach()
if(subcommands STREQUAL "")
  message(FATAL_ERROR "wattlab_man.cmake: no subcommands found in `wattlab --help`:\n${help}")
endif()

function(run_help2man out name help_option)
  execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-option=--version
                          "--help-option=${help_option}" "--name=${name}" --output=${out} ${WATTLAB_BIN}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "wattlab_man.cmake: help2man for ${out} exited ${rc}: ${err}")
  endif()
endfunction()

run_help2man(${OUT_DIR}/wattlab.1 "GPU and CPU energy of code regions, with an uncertainty on every number" --help)
foreach(sub IN LISTS subcommands)
  set(page ${OUT_DIR}/wattlab-${sub}.1)
  run_help2man(${page} "${desc_${sub}}" "${sub} --help")
  # help2man titles the page after the binary: retitle it after the subcommand.
  file(READ ${page} text)
  string(REGEX REPLACE "\n\\.TH WATTLAB " "\n.TH WATTLAB-${sub} " text "${text}")
  string(REPLACE "\nwattlab \\- " "\nwattlab-${sub} \\- " text "${text}")
  file(WRITE ${page} "${text}")
endforeach()
list(LENGTH subcommands n)
math(EXPR n "${n} + 1")
message(STATUS "wattlab_man.cmake: ${n} man pages in ${OUT_DIR}")
