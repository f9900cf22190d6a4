# kiln_add_plugin(<name> [VERSION v] SOURCES <files> [CUDA_SOURCES <files>] [SM90A_SOURCES <files>]
#                 ENTRY <file> [LINK_LIBRARIES <targets>])
#
# Builds a kiln plugin from one family folder:
#   kiln_<name>_impl  static library (PIC, hidden visibility) with SOURCES and CUDA_SOURCES; tests
#                     link it to call register_<name>() without loading a library;
#   kiln_<name>       the MODULE library the loader finds (ENTRY holds KILN_PLUGIN(...)).
# CUDA_SOURCES are compiled only when kiln has its CUDA backend, and then KILN_HAS_CUDA=1.
# SM90A_SOURCES (Hopper-only code: wgmma, setmaxnreg) are compiled only when the CUDA architectures
# include 90, their .cu files for sm_90a alone (kiln_<name>_sm90a, an object library inside
# kiln_<name>_impl); then KILN_HAS_SM90A=1, else 0 and the plugin builds without them.
#
# The build id (PluginInfo::build_id, shown by `kiln list`, stored with every tuned entry) is
# computed at build time by kiln_plugin_build_id.cmake from the plugin's compiled sources, the
# headers they include from the plugin's folder, the compile flags and definitions, and the CUDA
# architectures: an incremental build after editing a kernel or changing a flag gives a new id, so
# the entries tuned for the old code become stale.  Other files in the folder (an example program)
# do not count.  Works in kiln's tree and, through find_package(kiln), out of it.
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)  # custom commands below; kept consistent for older callers
endif()
set(_kiln_build_id_script ${CMAKE_CURRENT_LIST_DIR}/kiln_plugin_build_id.cmake)

# Writes the build-id inputs file: the sources to hash and the flags that shape the plugin's code.
# Called deferred, at the end of the directory that added the plugin, so that compile options the
# caller adds after kiln_add_plugin() count too.  Rewritten only when its content changes.
function(_kiln_plugin_write_build_id_inputs name inputs base_dir sources)
  set(flags "")
  foreach(lang CXX CUDA)
    if(lang STREQUAL "CUDA" AND NOT KILN_HAS_CUDA)
      continue()
    endif()
    string(APPEND flags " ${lang}:[${CMAKE_${lang}_FLAGS}]")
  endforeach()
  foreach(target kiln_${name}_impl kiln_${name})
    foreach(prop COMPILE_OPTIONS COMPILE_DEFINITIONS)
      get_target_property(value ${target} ${prop})
      if(value)
        string(APPEND flags " ${prop}:[${value}]")
      endif()
    endforeach()
  endforeach()
  if(KILN_HAS_CUDA)
    get_target_property(archs kiln_${name}_impl CUDA_ARCHITECTURES)
    string(APPEND flags " CUDA_ARCHITECTURES:[${archs}]")
  endif()
  set(content "set(kiln_base_dir [==[${base_dir}]==])\nset(kiln_sources [==[${sources}]==])\n")
  string(APPEND content "set(kiln_flags [==[${flags}]==])\n")
  set(configs ${CMAKE_CONFIGURATION_TYPES} ${CMAKE_BUILD_TYPE})
  list(REMOVE_DUPLICATES configs)
  foreach(config IN LISTS configs)
    string(TOUPPER "${config}" cfg)
    set(config_flags " CXX:[${CMAKE_CXX_FLAGS_${cfg}}]")
    if(KILN_HAS_CUDA)
      string(APPEND config_flags " CUDA:[${CMAKE_CUDA_FLAGS_${cfg}}]")
    endif()
    string(APPEND content "set(kiln_flags_${cfg} [==[${config_flags}]==])\n")
  endforeach()
  set(old "")
  if(EXISTS ${inputs})
    file(READ ${inputs} old)
  endif()
  if(NOT old STREQUAL content)
    file(WRITE ${inputs} "${content}")
  endif()
endfunction()

function(kiln_add_plugin name)
  cmake_parse_arguments(P "" "VERSION" "SOURCES;CUDA_SOURCES;SM90A_SOURCES;ENTRY;LINK_LIBRARIES" ${ARGN})
  if(NOT P_ENTRY)
    message(FATAL_ERROR "kiln_add_plugin(${name}): ENTRY <file with KILN_PLUGIN(...)> is required")
  endif()
  if(KILN_PLUGIN_BOOST_MISSING)  # set by find_package(kiln) when it found no Boost
    message(FATAL_ERROR "kiln_add_plugin(${name}): a plugin needs Boost >= 1.74 (Boost.DLL, used by "
                        "kiln/plugin.hpp), which find_package(kiln) did not find: install it (Debian: "
                        "libboost-dev) or add its prefix to CMAKE_PREFIX_PATH")
  endif()
  if(NOT P_VERSION)
    set(P_VERSION 0.1.0)
  endif()
  if(TARGET kiln::kiln)
    set(kiln_target kiln::kiln)
  else()
    set(kiln_target kiln)
  endif()
  if(NOT DEFINED KILN_HAS_CUDA)
    set(KILN_HAS_CUDA OFF)
  endif()

  set(sources ${P_SOURCES})
  if(KILN_HAS_CUDA)
    list(APPEND sources ${P_CUDA_SOURCES})
  endif()
  set(sm90a_sources "")
  if(KILN_HAS_CUDA AND P_SM90A_SOURCES AND CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90")
    set(sm90a_sources ${P_SM90A_SOURCES})
  endif()
  add_library(kiln_${name}_impl STATIC ${sources})
  if(sm90a_sources)
    # Architecture-specific code needs the `a` target, spelled as -gencode (HOPPER.md: the
    # -arch=sm_90a shorthand also ran a plain sm_90 pass that rejects wgmma).
    add_library(kiln_${name}_sm90a OBJECT ${sm90a_sources})
    target_link_libraries(kiln_${name}_sm90a PUBLIC ${kiln_target} ${P_LINK_LIBRARIES} CUDA::cudart)
    target_include_directories(kiln_${name}_sm90a PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_compile_definitions(kiln_${name}_sm90a PUBLIC KILN_HAS_CUDA=1 KILN_HAS_SM90A=1)
    target_compile_options(kiln_${name}_sm90a PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fvisibility=hidden -gencode=arch=compute_90a,code=sm_90a>)
    set_target_properties(kiln_${name}_sm90a PROPERTIES
      CUDA_ARCHITECTURES OFF POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
      VISIBILITY_INLINES_HIDDEN ON)
    target_sources(kiln_${name}_impl PRIVATE $<TARGET_OBJECTS:kiln_${name}_sm90a>)
    target_compile_definitions(kiln_${name}_impl PUBLIC KILN_HAS_SM90A=1)
  elseif(P_SM90A_SOURCES)
    target_compile_definitions(kiln_${name}_impl PUBLIC KILN_HAS_SM90A=0)
  else()
    # A plugin with no Hopper-only sources keeps the definition to itself: a PUBLIC =0 met gemm's
    # PUBLIC =1 in every test that links both ("KILN_HAS_SM90A redefined").  The property keeps
    # the same value, so the plugin's build id (which hashes COMPILE_DEFINITIONS) is unchanged.
    set_property(TARGET kiln_${name}_impl APPEND PROPERTY COMPILE_DEFINITIONS KILN_HAS_SM90A=0)
  endif()
  target_link_libraries(kiln_${name}_impl PUBLIC ${kiln_target} ${P_LINK_LIBRARIES})
  # kiln/plugin.hpp (the plugin-author header) uses Boost.DLL's alias; kiln itself keeps Boost private.
  if(TARGET Boost::headers)
    target_link_libraries(kiln_${name}_impl PUBLIC Boost::headers)
  endif()
  target_include_directories(kiln_${name}_impl PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(kiln_${name}_impl PROPERTIES
    POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(KILN_HAS_CUDA)
    target_compile_definitions(kiln_${name}_impl PUBLIC KILN_HAS_CUDA=1)
    target_link_libraries(kiln_${name}_impl PUBLIC CUDA::cudart)
    target_compile_options(kiln_${name}_impl PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fvisibility=hidden>)
  else()
    target_compile_definitions(kiln_${name}_impl PUBLIC KILN_HAS_CUDA=0)
  endif()

  # The build id: a header regenerated at build time whenever a hashed input changes.  It is
  # rerun when a source, a header in the plugin's folder or the inputs file changes; the script
  # itself decides which headers count (the includes it finds).
  set(id_dir ${CMAKE_CURRENT_BINARY_DIR}/kiln_${name}_build_id)
  set(id_inputs ${id_dir}/inputs.cmake)
  set(id_header ${id_dir}/kiln_plugin_build_id.hpp)
  set(id_stamp ${id_dir}/build_id.stamp)
  set(hashed ${sources} ${sm90a_sources} ${P_ENTRY})
  list(TRANSFORM hashed PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ REGEX "^[^/]")
  file(GLOB folder_headers CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp ${CMAKE_CURRENT_SOURCE_DIR}/*.h ${CMAKE_CURRENT_SOURCE_DIR}/*.cuh
       ${CMAKE_CURRENT_SOURCE_DIR}/*.inl)
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL _kiln_plugin_write_build_id_inputs [==[${name}]==] [==[${id_inputs}]==]
                    [==[${CMAKE_CURRENT_SOURCE_DIR}]==] [==[${hashed}]==])")
  add_custom_command(
    OUTPUT ${id_stamp}
    BYPRODUCTS ${id_header}
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${id_inputs} -DCONFIG=$<CONFIG> -DHEADER=${id_header} -DSTAMP=${id_stamp}
            -P ${_kiln_build_id_script}
    DEPENDS ${hashed} ${folder_headers} ${id_inputs} ${_kiln_build_id_script}
    COMMENT "kiln plugin ${name}: build id"
    VERBATIM)

  add_library(kiln_${name} MODULE ${P_ENTRY} ${id_stamp})
  target_link_libraries(kiln_${name} PRIVATE kiln_${name}_impl)
  target_include_directories(kiln_${name} PRIVATE ${id_dir})
  target_compile_definitions(kiln_${name} PRIVATE KILN_PLUGIN_BUILD_ID_HEADER="kiln_plugin_build_id.hpp")
  set_target_properties(kiln_${name} PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON PREFIX "lib")
  if(DEFINED KILN_PLUGIN_OUTPUT_DIR)
    set_target_properties(kiln_${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${KILN_PLUGIN_OUTPUT_DIR})
  endif()
  if(DEFINED KILN_PLUGIN_SUBDIR)
    install(TARGETS kiln_${name} LIBRARY DESTINATION ${KILN_PLUGIN_SUBDIR})
  endif()
  message(STATUS "kiln plugin ${name} ${P_VERSION}")
endfunction()
