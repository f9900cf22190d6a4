# Fills DIR with files for `kiln plugins check`: a good plugin, libraries that end the process in
# a static initialiser (abort, exit), a truncated copy of the good plugin and a non-ELF file.
#   cmake -DDIR=<dir> -DGOOD=<lib> -DABORT=<lib> -DEXIT=<lib> -P make_plugin_check_dir.cmake
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(COPY_FILE ${GOOD} ${DIR}/libkiln_fixture_good.so)
file(COPY_FILE ${ABORT} ${DIR}/libkiln_fixture_abort.so)
file(COPY_FILE ${EXIT} ${DIR}/libkiln_fixture_exit.so)
file(COPY_FILE ${GOOD} ${DIR}/libkiln_truncated.so)
execute_process(COMMAND truncate -s 6000 ${DIR}/libkiln_truncated.so RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "truncate failed: ${rc}")
endif()
file(WRITE ${DIR}/libkiln_notelf.so "INPUT(libkiln_other.so) /* a linker script, not a shared library: longer than an ELF header */\n")
