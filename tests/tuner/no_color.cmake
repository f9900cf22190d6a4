# NO_COLOR: kiln's log messages carry colour codes on a terminal, none when NO_COLOR is set.
#   cmake -DKILN=<path> -DSCRIPT=<script(1)> -P no_color.cmake
# Runs `kiln list` under a pseudo-terminal (script(1)) with KILN_LOG_LEVEL set to a typo, so
# that it logs a warning; TERM names a colour terminal.
foreach(var KILN SCRIPT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "no_color.cmake: -D${var}=... is required")
  endif()
endforeach()
string(ASCII 27 esc)
set(ENV{TERM} xterm-256color)
set(ENV{KILN_LOG_LEVEL} wran)

function(run_on_terminal out_var)
  execute_process(COMMAND ${SCRIPT} -qec "'${KILN}' list" /dev/null
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kiln list under script(1) failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "KILN_LOG_LEVEL='wran'")
    message(FATAL_ERROR "no warning in the output:\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

unset(ENV{NO_COLOR})
run_on_terminal(colored)
string(FIND "${colored}" "${esc}[" at)
if(at EQUAL -1)
  message(FATAL_ERROR "without NO_COLOR the warning on a terminal has no colour:\n${colored}")
endif()

set(ENV{NO_COLOR} 1)
run_on_terminal(plain)
string(FIND "${plain}" "${esc}[" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "with NO_COLOR=1 the output still has colour codes:\n${plain}")
endif()
message(STATUS "colour on a terminal, none with NO_COLOR")
