# cmake -P script behind the shipped_paths test: every path a user can read in kiln's docs,
# READMEs, shipped configs and plans, and scripts resolves inside the repository.
#
#   cmake -DSOURCE_DIR=<kiln's source tree> -P shipped_paths.cmake
#
# Fails on
#   - a path of a development machine (/work/, /home/, /root/, /tmp/kiln) or one that leaves the
#     repository (../shared, ../../..);
#   - a Markdown link to a local file that does not exist (relative to the Markdown file);
#   - a repository path named in the text (docs/..., configs/..., scripts/..., ... ending in a file
#     extension) that does not exist.
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "shipped_paths.cmake: -DSOURCE_DIR=... is required")
endif()

file(GLOB files
     ${SOURCE_DIR}/README.md ${SOURCE_DIR}/docs/*.md ${SOURCE_DIR}/plugins/*/README.md
     ${SOURCE_DIR}/examples/*/README.md ${SOURCE_DIR}/configs/*.yaml ${SOURCE_DIR}/configs/plans/*.yaml
     ${SOURCE_DIR}/scripts/*)
set(top_dirs cmake configs core docs examples plugins scripts tests tuner)
string(JOIN "|" top_alternatives ${top_dirs})
set(problems "")

foreach(file IN LISTS files)
  if(IS_DIRECTORY ${file})
    continue()
  endif()
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
  get_filename_component(dir ${file} DIRECTORY)
  file(STRINGS ${file} lines)
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    set(where "${rel}:${line_no}")
    if(line MATCHES "(^|[^A-Za-z0-9_.])(/work/|/home/|/root/|/tmp/kiln|\\.\\./shared|\\.\\./\\.\\./\\.\\./)")
      list(APPEND problems "${where}: a path outside the repository: ${line}")
    endif()
    # Markdown links: [text](target), local targets only.
    if(file MATCHES "\\.md$")
      string(REGEX MATCHALL "\\]\\([^) ]+\\)" links "${line}")
      foreach(link IN LISTS links)
        string(REGEX REPLACE "^\\]\\(([^)# ]*).*$" "\\1" target "${link}")
        if(target STREQUAL "" OR target MATCHES "^[a-z]+:")
          continue()
        endif()
        if(NOT EXISTS ${dir}/${target})
          list(APPEND problems "${where}: link to ${target}, which does not exist")
        endif()
      endforeach()
    endif()
    # Repository paths named in the text: top-level folder, then a path ending in an extension.
    # cuh before cu: the first alternative that fits wins, so "x.cuh" was read as "x.cu".
    string(REGEX MATCHALL "(^|[ `'\"(:])(${top_alternatives})/[A-Za-z0-9_./-]*\\.(md|yaml|txt|cmake|hpp|cpp|cuh|cu|sh|py|in)([^A-Za-z0-9_]|$)"
           mentions "${line}")
    foreach(mention IN LISTS mentions)
      string(REGEX REPLACE "^[ `'\"(:]?((${top_alternatives})/[A-Za-z0-9_./-]*\\.(md|yaml|txt|cmake|hpp|cpp|cuh|cu|sh|py|in)).*$"
             "\\1" path "${mention}")
      if(NOT EXISTS ${SOURCE_DIR}/${path})
        list(APPEND problems "${where}: names ${path}, which is not in the repository")
      endif()
    endforeach()
  endforeach()
endforeach()

list(LENGTH files count)
if(problems)
  string(JOIN "\n  " text ${problems})
  message(FATAL_ERROR "paths a user cannot follow:\n  ${text}")
endif()
message(STATUS "checked ${count} files: every path resolves inside the repository")
