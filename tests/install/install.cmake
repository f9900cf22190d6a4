# install_out_of_tree: installs this build into a scratch prefix, builds
# examples/out_of_tree_plugin against it with find_package(kiln), and runs the example.
# Included from tests/core/plugin_loader.cmake.  Needs the whole build done first (it installs
# everything), so it runs after the build in ctest like every other test.
set(kiln_cuda_root "")
if(KILN_HAS_CUDA AND CUDAToolkit_BIN_DIR)
  get_filename_component(kiln_cuda_root ${CUDAToolkit_BIN_DIR} DIRECTORY)
endif()
add_test(NAME install_out_of_tree
         COMMAND ${CMAKE_COMMAND}
                 -DKILN_BUILD_DIR=${PROJECT_BINARY_DIR}
                 -DKILN_EXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/out_of_tree_plugin
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_out_of_tree
                 -DGENERATOR=${CMAKE_GENERATOR}
                 -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
                 "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
                 "-DSHARED_LINKER_FLAGS=${CMAKE_SHARED_LINKER_FLAGS}"
                 "-DMODULE_LINKER_FLAGS=${CMAKE_MODULE_LINKER_FLAGS}"
                 -DCUDA_ROOT=${kiln_cuda_root}
                 -DBUILD_TYPE=$<IF:$<BOOL:$<CONFIG>>,$<CONFIG>,Release>
                 -P ${CMAKE_CURRENT_LIST_DIR}/install_out_of_tree.cmake)
set_tests_properties(install_out_of_tree PROPERTIES LABELS cpu TIMEOUT 900
                     ENVIRONMENT "KILN_LOG_LEVEL=warn" FIXTURES_SETUP kiln_installed)

# plugin_build_id: rebuilds a copy of the example against that install after edits and checks
# that the plugin's build id follows its sources and flags (and nothing else).
add_test(NAME plugin_build_id
         COMMAND ${CMAKE_COMMAND}
                 -DKILN_EXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/out_of_tree_plugin
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/plugin_build_id
                 -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/install_out_of_tree/prefix
                 -DGENERATOR=${CMAKE_GENERATOR}
                 -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -DCUDA_ROOT=${kiln_cuda_root}
                 -DBUILD_TYPE=$<IF:$<BOOL:$<CONFIG>>,$<CONFIG>,Release>
                 "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
                 "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
                 "-DSHARED_LINKER_FLAGS=${CMAKE_SHARED_LINKER_FLAGS}"
                 "-DMODULE_LINKER_FLAGS=${CMAKE_MODULE_LINKER_FLAGS}"
                 -P ${CMAKE_CURRENT_LIST_DIR}/plugin_build_id.cmake)
set_tests_properties(plugin_build_id PROPERTIES LABELS cpu TIMEOUT 900
                     ENVIRONMENT "KILN_LOG_LEVEL=warn" FIXTURES_REQUIRED kiln_installed)

# shipped_paths: every path named in the docs, READMEs, shipped configs and plans, and scripts
# resolves inside the repository (no development machine's paths, no links to missing files).
add_test(NAME shipped_paths
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/shipped_paths.cmake)
set_tests_properties(shipped_paths PROPERTIES LABELS cpu)

# header_table: docs/architecture.md describes every installed header.
add_test(NAME header_table
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/header_table.cmake)
set_tests_properties(header_table PROPERTIES LABELS cpu)

# plugin_guide_code: docs/writing-a-plugin.md shows the example's files exactly (which
# install_out_of_tree builds and tests).
add_test(NAME plugin_guide_code
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/plugin_guide.cmake)
set_tests_properties(plugin_guide_code PROPERTIES LABELS cpu)

# header_diet: kiln/kiln.hpp exposes kiln's types only (no spdlog, fmt, Boost, yaml-cpp or CUDA
# header or macro; fmt::format does not compile with it alone).
add_test(NAME header_diet
         COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER}
                 "-DINCLUDES=${PROJECT_SOURCE_DIR}/core/include;${PROJECT_BINARY_DIR}/include"
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/header_diet -P ${CMAKE_CURRENT_LIST_DIR}/header_diet.cmake)
set_tests_properties(header_diet PROPERTIES LABELS cpu)

# core_alone: the tree configures with -DKILN_BUILD_TUNER=OFF, and nothing it builds is the tuner's.
add_test(NAME core_alone
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/core_alone
                 -DGENERATOR=${CMAKE_GENERATOR} -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM} -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -P ${CMAKE_CURRENT_LIST_DIR}/core_alone.cmake)
set_tests_properties(core_alone PROPERTIES LABELS cpu TIMEOUT 300)
