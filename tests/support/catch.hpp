// Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04) behind one include.
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#define KILN_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#define KILN_CATCH_V3 0
#endif
