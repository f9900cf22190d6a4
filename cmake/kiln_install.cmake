# Install rules and the CMake package (find_package(kiln)).  Included at the end of the
# top-level CMakeLists.txt, once every target exists.
#
#   <prefix>/lib/libkiln.so, libkiln_tuner.so   the libraries (CMAKE_INSTALL_LIBDIR)
#   <prefix>/lib/kiln/plugins/libkiln_*.so      shipped plugins (installed by kiln_add_plugin)
#   <prefix>/lib/cmake/kiln/                    kilnConfig.cmake, kilnTargets.cmake, kiln_add_plugin.cmake,
#                                               kiln_plugin_build_id.cmake
#   <prefix>/include/kiln/                      public headers (core and tuner)
#   <prefix>/share/kiln/configs/                shipped tuning databases and plans/
#   <prefix>/bin/kiln                           the CLI, when built
include(CMakePackageConfigHelpers)

set(KILN_CMAKE_SUBDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# libkiln finds its plugins and configs relative to its own directory (core/src/install_paths.cpp);
# tell it how the layout relates, so e.g. lib/x86_64-linux-gnu works as well as lib.  The build
# tree uses the same relative layout.
file(RELATIVE_PATH kiln_plugin_rel_dir /kiln_root/${CMAKE_INSTALL_LIBDIR} /kiln_root/${KILN_PLUGIN_SUBDIR})
file(RELATIVE_PATH kiln_config_rel_dir /kiln_root/${CMAKE_INSTALL_LIBDIR} /kiln_root/${KILN_CONFIG_SUBDIR})
set_property(SOURCE ${PROJECT_SOURCE_DIR}/core/src/install_paths.cpp TARGET_DIRECTORY kiln APPEND PROPERTY
             COMPILE_DEFINITIONS KILN_PLUGIN_REL_DIR="${kiln_plugin_rel_dir}"
                                 KILN_CONFIG_REL_DIR="${kiln_config_rel_dir}")

# kiln::kiln (the core) and, when built, kiln::tuner (the tuner library, also what the core loads
# for KILN_TUNE=lazy|record from the same directory).
set(kiln_exported_targets kiln)
if(TARGET kiln_tuner)
  list(APPEND kiln_exported_targets kiln_tuner)
endif()
install(TARGETS ${kiln_exported_targets} EXPORT kilnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET kiln_tuner)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/tuner/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(FILES ${PROJECT_BINARY_DIR}/include/kiln/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)

# The CLI: the executable target in tuner/cli whose output name is `kiln` (its target name cannot
# be `kiln`, that is the library).  Relocatable: it finds libkiln through $ORIGIN.
if(TARGET kiln_tuner AND EXISTS ${PROJECT_SOURCE_DIR}/tuner/cli/CMakeLists.txt)
  get_property(cli_targets DIRECTORY ${PROJECT_SOURCE_DIR}/tuner/cli PROPERTY BUILDSYSTEM_TARGETS)
  file(RELATIVE_PATH cli_rpath /kiln_root/${CMAKE_INSTALL_BINDIR} /kiln_root/${CMAKE_INSTALL_LIBDIR})
  foreach(cli_target IN LISTS cli_targets)
    get_target_property(cli_type ${cli_target} TYPE)
    get_target_property(cli_output_name ${cli_target} OUTPUT_NAME)
    if(cli_type STREQUAL "EXECUTABLE" AND (cli_output_name STREQUAL "kiln" OR cli_target STREQUAL "kiln_cli"))
      set_target_properties(${cli_target} PROPERTIES INSTALL_RPATH "$ORIGIN/${cli_rpath}")
      install(TARGETS ${cli_target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
  endforeach()
endif()

file(GLOB kiln_install_configs ${PROJECT_SOURCE_DIR}/configs/*.yaml)
install(FILES ${kiln_install_configs} DESTINATION ${KILN_CONFIG_SUBDIR})
file(GLOB kiln_install_plans ${PROJECT_SOURCE_DIR}/configs/plans/*.yaml)
install(FILES ${kiln_install_plans} DESTINATION ${KILN_CONFIG_SUBDIR}/plans)

# For out-of-tree plugins' CUDA sources (kilnConfig.cmake's KILN_CUDA_ARCHITECTURES).
if(KILN_HAS_CUDA)
  set(KILN_EXPORTED_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(KILN_EXPORTED_CUDA_ARCHITECTURES "")
endif()

install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_SUBDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_CMAKE_SUBDIR}
                              PATH_VARS KILN_PLUGIN_SUBDIR KILN_CONFIG_SUBDIR)
# The plugin ABI changes between minor versions while kiln is 0.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/kilnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/kilnConfig.cmake ${PROJECT_BINARY_DIR}/cmake/kilnConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/kiln_add_plugin.cmake ${PROJECT_SOURCE_DIR}/cmake/kiln_plugin_build_id.cmake
        DESTINATION ${KILN_CMAKE_SUBDIR})
