# The plugin loader test and its fixture plugins, and the install test.  Included from
# tests/core/CMakeLists.txt (after tests/support/kiln_test.cmake).
set(KILN_FIXTURE_PLUGIN_DIR ${CMAKE_CURRENT_BINARY_DIR}/plugin_loader_fixture)
set(KILN_FIXTURE_EXTRA_DIR ${CMAKE_CURRENT_BINARY_DIR}/plugin_loader_fixture_extra)
set(KILN_FIXTURE_CRASH_DIR ${CMAKE_CURRENT_BINARY_DIR}/plugin_loader_fixture_crash)
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/plugins_fixture ${CMAKE_CURRENT_BINARY_DIR}/plugins_fixture)

kiln_add_test(test_plugin_loader SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_plugin_loader.cpp)
target_compile_definitions(test_plugin_loader PRIVATE KILN_FIXTURE_PLUGIN_DIR="${KILN_FIXTURE_PLUGIN_DIR}"
                           KILN_FIXTURE_EXTRA_DIR="${KILN_FIXTURE_EXTRA_DIR}")
target_include_directories(test_plugin_loader PRIVATE ${PROJECT_SOURCE_DIR}/core/src)  # install_paths.hpp
target_link_libraries(test_plugin_loader PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_plugin_loader kiln_fixture_good kiln_fixture_rival kiln_fixture_abi kiln_fixture_noentry
                 kiln_fixture_offspace kiln_fixture_unresolved)

include(${PROJECT_SOURCE_DIR}/tests/install/install.cmake)
