# cmake -P script behind the plugin_build_id test: a plugin's build id follows what is compiled
# into it, on incremental builds (see cmake/kiln_add_plugin.cmake).  Arguments as for
# install_out_of_tree.cmake plus -DPREFIX=<the prefix that test installed kiln into>.
#
#   1. copy examples/out_of_tree_plugin to <work>/src, build it host-only against PREFIX and read
#      the plugin's build id from its program's output ("plugin scale_example 0.1.0 (build <id>)");
#   2. edit a plugin source (scale_host.cpp), rebuild (`cmake --build` only, as a user would): a
#      new id;
#   3. edit a header a plugin source includes (scale_op.hpp), rebuild: a new id;
#   4. edit the example program (run_scale_example.cpp, not part of the plugin), rebuild: the same
#      id, and the plugin library is not even relinked;
#   5. reconfigure with another CMAKE_CXX_FLAGS, rebuild: a new id;
#   6. the untouched example, copied to a second directory and built there: the id of step 1 (the
#      id names the code, not where it was checked out).
foreach(var KILN_EXAMPLE_DIR WORK_DIR GENERATOR PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "plugin_build_id.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(common_args -G ${GENERATOR} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${PREFIX} -DKILN_HAS_CUDA=OFF)
if(MAKE_PROGRAM)
  list(APPEND common_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CXX_COMPILER)
  list(APPEND common_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CUDA_ROOT)
  list(APPEND common_args -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
# kiln's own flags (the sanitizer build's -fsanitize=...): an example built without them cannot
# load a sanitized libkiln.  Step 5 adds a define on top of CXX_FLAGS.
foreach(flags EXE_LINKER_FLAGS SHARED_LINKER_FLAGS MODULE_LINKER_FLAGS)
  if(${flags})
    list(APPEND common_args "-DCMAKE_${flags}=${${flags}}")
  endif()
endforeach()
set(base_cxx_flags "${CXX_FLAGS}")
list(APPEND common_args "-DCMAKE_CXX_FLAGS=${base_cxx_flags}")

# Builds <src> in <build> and returns the plugin's id.  Configures first only when given CONFIGURE
# and arguments: the edits below are seen by an incremental `cmake --build` alone, as a user runs it.
function(build_and_read_id src build out_var)
  if(ARGN)
    list(POP_FRONT ARGN first)
    run_step("configuring ${src}" ${CMAKE_COMMAND} -S ${src} -B ${build} ${common_args} ${ARGN})
  endif()
  run_step("building ${src}" ${CMAKE_COMMAND} --build ${build} --config ${BUILD_TYPE})
  run_step("running the example in ${build}"
           ${CMAKE_COMMAND} -E env KILN_PLUGIN_PATH=${build} KILN_CACHE_DIR=${WORK_DIR}/cache
           ${build}/run_scale_example)
  if(NOT step_output MATCHES "scale_host +plugin scale_example 0\\.1\\.0 \\(build ([0-9a-f]+)\\)")
    message(FATAL_ERROR "no build id in the example's output:\n${step_output}")
  endif()
  set(id ${CMAKE_MATCH_1})
  string(LENGTH "${id}" length)
  if(NOT length EQUAL 12)
    message(FATAL_ERROR "build id '${id}' is not 12 hex digits")
  endif()
  set(${out_var} ${id} PARENT_SCOPE)
endfunction()

function(expect_change what before after)
  if(before STREQUAL after)
    message(FATAL_ERROR "${what}: the build id stayed ${before}")
  endif()
  message(STATUS "${what}: build id ${before} -> ${after}")
endfunction()

set(src ${WORK_DIR}/src)
set(build ${WORK_DIR}/build)
file(COPY ${KILN_EXAMPLE_DIR}/ DESTINATION ${src})

build_and_read_id(${src} ${build} id_initial CONFIGURE)
message(STATUS "initial build id ${id_initial}")

file(APPEND ${src}/scale_host.cpp "\n// an edit to a plugin source\n")
build_and_read_id(${src} ${build} id_source_edit)
expect_change("edited scale_host.cpp" ${id_initial} ${id_source_edit})

file(APPEND ${src}/scale_op.hpp "\n// an edit to a header a plugin source includes\n")
build_and_read_id(${src} ${build} id_header_edit)
expect_change("edited scale_op.hpp" ${id_source_edit} ${id_header_edit})

file(TIMESTAMP ${build}/libkiln_scale_example.so plugin_time_before "%s")
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)  # a relink would show in the seconds
file(APPEND ${src}/run_scale_example.cpp "\n// an edit to the example program, not the plugin\n")
build_and_read_id(${src} ${build} id_program_edit)
if(NOT id_program_edit STREQUAL id_header_edit)
  message(FATAL_ERROR "editing the example program changed the plugin's build id: "
                      "${id_header_edit} -> ${id_program_edit}")
endif()
file(TIMESTAMP ${build}/libkiln_scale_example.so plugin_time_after "%s")
if(NOT plugin_time_before STREQUAL plugin_time_after)
  message(FATAL_ERROR "editing the example program relinked the plugin library")
endif()
message(STATUS "edited run_scale_example.cpp: build id stays ${id_program_edit}")

build_and_read_id(${src} ${build} id_flags_edit CONFIGURE "-DCMAKE_CXX_FLAGS=${base_cxx_flags} -DKILN_BUILD_ID_TEST_FLAG=1")
expect_change("CMAKE_CXX_FLAGS changed" ${id_program_edit} ${id_flags_edit})

set(src2 ${WORK_DIR}/elsewhere/src)
file(COPY ${KILN_EXAMPLE_DIR}/ DESTINATION ${src2})
build_and_read_id(${src2} ${WORK_DIR}/elsewhere/build id_elsewhere CONFIGURE)
if(NOT id_elsewhere STREQUAL id_initial)
  message(FATAL_ERROR "the same sources built in another directory got build id ${id_elsewhere}, "
                      "not ${id_initial}")
endif()
message(STATUS "the same sources elsewhere: build id ${id_elsewhere}")
