// Runs the Catch2 session over the test cases linked into the executable (catch_session.cpp).
#pragma once

int kiln_test_run_catch_session(int argc, char** argv);
