# cmake -P script behind the header_diet test: a program that includes only kiln/kiln.hpp sees
# kiln's types only (design rule 4).  It checks, with kiln's own compiler:
#   1. the headers kiln.hpp pulls in (-M) are kiln's and the standard library's: no spdlog, fmt,
#      Boost, yaml-cpp or CUDA header;
#   2. no BOOST_*, FMT_*, SPDLOG_*, YAML_* or CUDA macro is defined after including it (-dM);
#   3. code that uses fmt::format, spdlog::info or boost::dll with only kiln.hpp included does
#      not compile (and the same TU without that line does, so the failure is the one meant).
#   cmake -DCXX=<compiler> -DINCLUDES=<dir;dir> -DWORK_DIR=<scratch> -P header_diet.cmake
cmake_minimum_required(VERSION 3.20)  # policies for the script (while(TRUE), if())
foreach(var CXX INCLUDES WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "header_diet.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(flags -std=c++17)
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags -I${dir})
endforeach()

set(uses_kiln "kiln::RuntimeOptions options; options.log_level = kiln::LogLevel::info; return options.load_plugins ? 0 : 1;")
file(WRITE ${WORK_DIR}/only_kiln.cpp "#include <kiln/kiln.hpp>\nint main() { ${uses_kiln} }\n")

# 1. What kiln.hpp includes.
execute_process(COMMAND ${CXX} ${flags} -M ${WORK_DIR}/only_kiln.cpp RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a TU including only kiln/kiln.hpp does not compile:\n${err}")
endif()
string(REGEX MATCHALL "[^ \\\n]+\\.(h|hpp|hxx|hh|cuh|inl|ipp)" headers "${deps}")
set(foreign "")
foreach(h IN LISTS headers)
  if(h MATCHES "/(spdlog|fmt|boost|yaml-cpp)/|/cuda[^/]*\\.h$|/crt/|cuda_runtime|/targets/[^/]+/include/")
    list(APPEND foreign ${h})
  endif()
endforeach()
if(foreign)
  list(REMOVE_DUPLICATES foreign)
  string(JOIN "\n  " text ${foreign})
  message(FATAL_ERROR "kiln/kiln.hpp includes headers of kiln's dependencies:\n  ${text}")
endif()
list(LENGTH headers count)
message(STATUS "kiln.hpp: ${count} headers, none of spdlog, fmt, Boost, yaml-cpp or CUDA")

# 2. Macros.
execute_process(COMMAND ${CXX} ${flags} -E -dM ${WORK_DIR}/only_kiln.cpp RESULT_VARIABLE rc OUTPUT_VARIABLE macros ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "preprocessing only_kiln.cpp failed:\n${err}")
endif()
string(REGEX MATCHALL "#define (BOOST_|FMT_|SPDLOG_|YAML_|CUDA|__CUDA)[A-Za-z0-9_]*" leaked "${macros}")
if(leaked)
  list(LENGTH leaked n)
  list(SUBLIST leaked 0 10 some)
  string(JOIN "\n  " text ${some})
  message(FATAL_ERROR "kiln/kiln.hpp defines ${n} macros of its dependencies, e.g.\n  ${text}")
endif()

# 3. Their names do not compile.
set(names "fmt::format(\"{}\", 1).size()" "(spdlog::info(\"x\"), 0)" "sizeof(boost::dll::shared_library)")
foreach(use IN LISTS names)
  file(WRITE ${WORK_DIR}/uses_dependency.cpp
       "#include <kiln/kiln.hpp>\nint main() { ${uses_kiln}\n  return static_cast<int>(${use}); }\n")
  execute_process(COMMAND ${CXX} ${flags} -fsyntax-only ${WORK_DIR}/uses_dependency.cpp
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "`${use}` compiles with only kiln/kiln.hpp included: a dependency leaks into consumers")
  endif()
  string(REGEX MATCH "^[a-z]+" ns "${use}")
  if(ns STREQUAL "sizeof")
    set(ns boost)
  endif()
  if(NOT err MATCHES "${ns}")
    message(FATAL_ERROR "`${use}` failed to compile, but not for the expected reason:\n${err}")
  endif()
  message(STATUS "does not compile with only kiln.hpp, as intended: ${use}")
endforeach()

# 4. A plugin entry written against kiln.hpp alone is told which header it needs.
file(WRITE ${WORK_DIR}/entry_without_plugin_hpp.cpp
     "#include <kiln/kiln.hpp>\nkiln::Status register_x(kiln::Registry&) noexcept;\nKILN_PLUGIN(\"x\", \"0.1.0\", register_x)\n")
execute_process(COMMAND ${CXX} ${flags} -fsyntax-only ${WORK_DIR}/entry_without_plugin_hpp.cpp
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "include <kiln/plugin.hpp>|declared in <kiln/plugin.hpp>")
  message(FATAL_ERROR "KILN_PLUGIN with only kiln.hpp must fail naming kiln/plugin.hpp (rc ${rc}):\n${err}")
endif()
