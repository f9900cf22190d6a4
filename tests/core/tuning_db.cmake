# TuningDb tests (host only), included from tests/core/CMakeLists.txt.
kiln_add_test(test_tuning_db SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tuning_db.cpp)
