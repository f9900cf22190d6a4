# kiln_add_plugin(<name> [VERSION v] SOURCES <files> [CUDA_SOURCES <files>] ENTRY <file>
#                 [LINK_LIBRARIES <targets>])
#
# Builds a kiln plugin from one family folder:
#   kiln_<name>_impl  static library (PIC, hidden visibility) with SOURCES and CUDA_SOURCES; tests
#                     link it to call register_<name>() without loading a library;
#   kiln_<name>       the MODULE library the loader finds (ENTRY holds KILN_PLUGIN(...)).
# CUDA_SOURCES are compiled only when kiln has its CUDA backend, and then KILN_HAS_CUDA=1.
# The build id is a hash of the files in the plugin's folder, so a changed kernel makes its tuned
# entries stale.  Works in kiln's tree and, through find_package(kiln), out of it.
function(kiln_add_plugin name)
  cmake_parse_arguments(P "" "VERSION" "SOURCES;CUDA_SOURCES;ENTRY;LINK_LIBRARIES" ${ARGN})
  if(NOT P_ENTRY)
    message(FATAL_ERROR "kiln_add_plugin(${name}): ENTRY <file with KILN_PLUGIN(...)> is required")
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

  file(GLOB plugin_files CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp
       ${CMAKE_CURRENT_SOURCE_DIR}/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/*.cuh)
  list(SORT plugin_files)
  set(digest "")
  foreach(f IN LISTS plugin_files)
    file(SHA256 ${f} h)
    string(APPEND digest ${h})
  endforeach()
  string(SHA256 digest "${digest}")
  string(SUBSTRING ${digest} 0 12 build_id)

  set(sources ${P_SOURCES})
  if(KILN_HAS_CUDA)
    list(APPEND sources ${P_CUDA_SOURCES})
  endif()
  add_library(kiln_${name}_impl STATIC ${sources})
  target_link_libraries(kiln_${name}_impl PUBLIC ${kiln_target} ${P_LINK_LIBRARIES})
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

  add_library(kiln_${name} MODULE ${P_ENTRY})
  target_link_libraries(kiln_${name} PRIVATE kiln_${name}_impl)
  target_compile_definitions(kiln_${name} PRIVATE KILN_PLUGIN_BUILD_ID="${build_id}")
  set_target_properties(kiln_${name} PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON PREFIX "lib")
  if(DEFINED KILN_PLUGIN_OUTPUT_DIR)
    set_target_properties(kiln_${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${KILN_PLUGIN_OUTPUT_DIR})
  endif()
  if(DEFINED KILN_PLUGIN_SUBDIR)
    install(TARGETS kiln_${name} LIBRARY DESTINATION ${KILN_PLUGIN_SUBDIR})
  endif()
  set_property(TARGET kiln_${name} PROPERTY KILN_BUILD_ID ${build_id})
  message(STATUS "kiln plugin ${name} ${P_VERSION} (build ${build_id})")
endfunction()
