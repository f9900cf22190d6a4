// Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04) behind one include.
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#define KILN_CATCH_V3 1
// A substring matcher for CHECK_THROWS_WITH / CHECK_THAT under both versions.
#define KILN_CONTAINS(text) Catch::Matchers::ContainsSubstring(text)
#else
#include <catch2/catch.hpp>
#define KILN_CATCH_V3 0
#define KILN_CONTAINS(text) Catch::Contains(text)
#endif
