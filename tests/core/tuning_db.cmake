# TuningDb tests (host only), included from tests/core/CMakeLists.txt.
kiln_add_test(test_tuning_db SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tuning_db.cpp
              ${CMAKE_CURRENT_LIST_DIR}/test_tuning_db_hardening.cpp
              ${CMAKE_CURRENT_LIST_DIR}/test_tuning_db_write_rules.cpp)
# /dev/zero and the alias bombs must end with an error, not run until the machine gives out.
set_tests_properties(test_tuning_db PROPERTIES TIMEOUT 300)
# The loader's fuzz test: a few seconds here, longer with KILN_FUZZ_SECONDS=N.
kiln_add_test(test_tuning_db_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tuning_db_fuzz.cpp)
set_tests_properties(test_tuning_db_fuzz PROPERTIES TIMEOUT 900)
