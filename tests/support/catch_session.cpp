// The Catch2 session every test executable runs, compiled once for the host and GPU mains alike
// (test_main.cpp).  With Catch2 v2 (header-only, Debian 12) this translation unit holds the whole
// runner implementation, the heaviest one of the test build: about 50 s of a 2-core CI machine,
// 130-145 s under ASan, and it was compiled twice, once per main.
#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include "catch_session.hpp"

int kiln_test_run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
