# scripts/plot_sweep.py reads what `kiln tune --json` writes: a single problem's document and a
# plan's JSON Lines.  Checks the --table form (no matplotlib needed): every problem listed, its
# candidates with times, the winner marked with '*'.
#   cmake -DKILN=<path> -DPYTHON=<python3> -DSCRIPT=<plot_sweep.py> -DPLAN=<plan> -DWORK_DIR=<dir>
#         -P plot_sweep.cmake
foreach(var KILN PYTHON SCRIPT PLAN WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "plot_sweep.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(check_sweep what expected_problems)
  execute_process(COMMAND ${ARGN} OUTPUT_FILE ${WORK_DIR}/${what}.json RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: kiln failed (${rc}): ${err}")
  endif()
  execute_process(COMMAND ${PYTHON} ${SCRIPT} ${WORK_DIR}/${what}.json --table
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: plot_sweep.py --table failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "tuner_scale [^\n]* on host" titles "${out}")
  list(LENGTH titles problems)
  string(REGEX MATCHALL "\n  \\* +[0-9.]+ us" winners "${out}")
  list(LENGTH winners marked)
  string(REGEX MATCHALL "\n    +[0-9.]+ us" others "${out}")
  if(NOT problems EQUAL expected_problems OR NOT marked EQUAL expected_problems OR NOT others)
    message(FATAL_ERROR "${what}: expected ${expected_problems} problem(s), each with a marked winner "
                        "among timed candidates; got ${problems} and ${marked}:\n${out}")
  endif()
  message(STATUS "${what}:\n${out}")
endfunction()

check_sweep(single 1 ${KILN} tune tuner_scale --shape 1000 --device host --runs 3 --no-store --json)
check_sweep(plan 2 ${KILN} tune --plan ${PLAN} --runs 3 --force --no-store --json)
