# cmake -P script behind the header_table test: docs/architecture.md's header tables name every
# installed public header (core/include/kiln, tuner/include/kiln/tuner, and the generated
# version.hpp), so the reference a user reads is complete.
#   cmake -DSOURCE_DIR=<kiln's source tree> -P header_table.cmake
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "header_table.cmake: -DSOURCE_DIR=... is required")
endif()
file(READ ${SOURCE_DIR}/docs/architecture.md doc)
file(GLOB headers RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/core/include/kiln/*.hpp ${SOURCE_DIR}/tuner/include/kiln/tuner/*.hpp)
list(APPEND headers generated/kiln/version.hpp)
set(missing "")
foreach(h IN LISTS headers)
  get_filename_component(name ${h} NAME)
  string(FIND "${doc}" "| `${name}` |" at)
  if(at EQUAL -1)
    list(APPEND missing ${h})
  endif()
endforeach()
if(missing)
  string(JOIN "\n  " text ${missing})
  message(FATAL_ERROR "docs/architecture.md has no header-table row for:\n  ${text}")
endif()
list(LENGTH headers count)
message(STATUS "all ${count} installed headers are in docs/architecture.md")
