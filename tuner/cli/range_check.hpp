// Bounds for numeric flags.  CLI11's PositiveNumber prints its bound as a 309-digit number and
// lets `nan` through (every comparison with NaN is false); in_range() names readable bounds and
// refuses nan, inf and anything that does not parse as a number.
//
//   app->add_option("--budget-seconds", seconds)->check(in_range(0.001, 1e7));
//   app->add_option("--runs", runs)->transform(count_in_range(1, 1e6));   // transform: it rewrites "1e3"
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "tuning_db_files.hpp"

namespace kiln::cli {

// Number text as a person writes it (tuning_db_files.hpp): strtod, behind CLI11's lexical_cast,
// also took " 5" and hex ("--runs 0x10" ran 16), which seeds refused.
using detail::decimal_text;

inline CLI::Validator in_range(double lo, double hi) {
  char text[80];
  std::snprintf(text, sizeof text, "in [%.15g, %.15g]", lo, hi);
  const std::string bounds = text;
  return CLI::Validator(
      [lo, hi, bounds](std::string& input) -> std::string {
        double v = 0.0;
        if (!decimal_text(input) || !CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < lo || v > hi)
          return "'" + input + "' is not a number " + bounds;
        return {};
      },
      "NUMBER " + bounds);
}

// Counts (--runs, --budget-evals, --iters, ...): a whole number in [lo, hi], written as an integer
// or as a float that is one (`1e3`).  The flag's variable is an integer, so the validator rewrites
// the text to its integer digits (add it with transform(): check() discards the rewrite): CLI11's own conversion refused "1e3" with "Could not convert:
// --runs = 1e3", and "1.5" the same way, naming neither the bounds nor what was wrong.
inline CLI::Validator count_in_range(double lo, double hi) {
  char text[80];
  std::snprintf(text, sizeof text, "in [%.15g, %.15g]", lo, hi);
  const std::string bounds = text;
  return CLI::Validator(
      [lo, hi, bounds](std::string& input) -> std::string {
        double v = 0.0;
        if (!decimal_text(input) || !CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < lo || v > hi ||
            v != std::floor(v))
          return "'" + input + "' is not a whole number " + bounds;
        input = std::to_string(static_cast<long long>(v));
        return {};
      },
      "INTEGER " + bounds);
}

// Seeds: a decimal integer in [0, 2^64 - 1].  CLI11 reads "-1" and any number past 2^64 - 1 as
// 2^64 - 1 without a word, so two different seeds typed would silently be one.
inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        std::uint64_t v = 0;
        const char* end = input.data() + input.size();
        const auto [ptr, ec] = std::from_chars(input.data(), end, v);
        if (input.empty() || ec != std::errc() || ptr != end)
          return "'" + input + "' is not an integer in [0, 18446744073709551615]";
        return {};
      },
      "INTEGER in [0, 2^64 - 1]");
}

// Text flags (--shape, --dtype, --device, --plan, ...): an empty value is refused.  It is what an
// unset variable in a script gives (`--dtype "$DTYPE"`), and it meant "the default" without a
// word (--plan '' said only "give exactly one of ..."); leaving the flag out still does.
inline CLI::Validator not_empty(const std::string& expected, bool has_default = true) {
  return CLI::Validator(
      [expected, has_default](std::string& input) -> std::string {
        if (input.empty())
          return "'' is empty: expected " + expected + (has_default ? " (leave the flag out for the default)" : "");
        return {};
      },
      "");
}

}  // namespace kiln::cli
