# cmake -P script behind the install_out_of_tree test (see install.cmake for the arguments):
#   1. cmake --install <build> --prefix <work>/prefix
#   2. configure and build examples/out_of_tree_plugin with CMAKE_PREFIX_PATH=<work>/prefix and
#      KILN_HAS_CUDA=OFF (the example's plugin host-only, whatever kiln was built with)
#   3. run its executable with KILN_PLUGIN_PATH=<its build dir>: (the empty entry: the installed
#      plugins too): it loads the plugin through the installed libkiln, runs the op and prints
#      "scale_example: ok"; the installed plugins must load from <prefix>/<libdir>/kiln/plugins,
#      found relative to the installed libkiln.so (the prefix is not CMAKE_INSTALL_PREFIX)
#   4. when the CLI was installed: `kiln list` on the same path shows the plugin's op.
foreach(var KILN_BUILD_DIR KILN_EXAMPLE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_out_of_tree.cmake: -D${var}=... is required")
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

set(prefix ${WORK_DIR}/prefix)
set(example_build ${WORK_DIR}/example-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix} --config ${BUILD_TYPE})
message(STATUS "installed kiln into ${prefix}")

set(configure_args -S ${KILN_EXAMPLE_DIR} -B ${example_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${prefix} -DKILN_HAS_CUDA=OFF)
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
# kiln's own compiler and linker flags (the sanitizer build's -fsanitize=...): an example built
# without them cannot load into a sanitized libkiln's process, or is not checked by it.
foreach(flags CXX_FLAGS EXE_LINKER_FLAGS SHARED_LINKER_FLAGS MODULE_LINKER_FLAGS)
  if(${flags})
    list(APPEND configure_args "-DCMAKE_${flags}=${${flags}}")
  endif()
endforeach()
if(CUDA_ROOT)  # kiln built with CUDA: its package looks for the same toolkit
  list(APPEND configure_args -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run_step("configuring the example" ${CMAKE_COMMAND} ${configure_args})
run_step("building the example" ${CMAKE_COMMAND} --build ${example_build} --config ${BUILD_TYPE})
if(NOT EXISTS ${example_build}/libkiln_scale_example.so)
  message(FATAL_ERROR "the example build made no libkiln_scale_example.so in ${example_build}")
endif()

# A scratch cache dir keeps the user's tuning file out of it.
set(env ${CMAKE_COMMAND} -E env KILN_PLUGIN_PATH=${example_build}: KILN_CACHE_DIR=${WORK_DIR}/cache)
run_step("running the example" ${env} ${example_build}/run_scale_example)
message(STATUS "example output:\n${step_output}")
if(NOT step_output MATCHES "scale_example: ok")
  message(FATAL_ERROR "the example did not report success:\n${step_output}")
endif()
if(NOT step_output MATCHES "scale_host +plugin scale_example 0\\.1\\.0")
  message(FATAL_ERROR "the example's variant did not come from the out-of-tree plugin:\n${step_output}")
endif()
file(GLOB installed_plugins ${prefix}/*/kiln/plugins/libkiln_*.so ${prefix}/*/*/kiln/plugins/libkiln_*.so)
if(installed_plugins)
  list(GET installed_plugins 0 one_plugin)
  get_filename_component(one_name ${one_plugin} NAME)
  string(FIND "${step_output}" "/kiln/plugins/${one_name}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the installed plugins (e.g. ${one_plugin}) were not found from the installed "
                        "libkiln:\n${step_output}")
  endif()
endif()

if(EXISTS ${prefix}/bin/kiln)
  run_step("kiln list" ${env} ${prefix}/bin/kiln list)
  message(STATUS "kiln list:\n${step_output}")
  if(NOT step_output MATCHES "scale_host")
    message(FATAL_ERROR "`kiln list` does not show the example's op:\n${step_output}")
  endif()
else()
  message(STATUS "no CLI installed (${prefix}/bin/kiln); skipped the `kiln list` check")
endif()
