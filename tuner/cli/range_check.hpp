// Bounds for numeric flags.  CLI11's PositiveNumber prints its bound as a 309-digit number and
// lets `nan` through (every comparison with NaN is false); in_range() names readable bounds and
// refuses nan, inf and anything that does not parse as a number.
//
//   app->add_option("--runs", runs)->check(in_range(1, 1e6));
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

namespace kiln::cli {

inline CLI::Validator in_range(double lo, double hi) {
  char text[80];
  std::snprintf(text, sizeof text, "in [%.15g, %.15g]", lo, hi);
  const std::string bounds = text;
  return CLI::Validator(
      [lo, hi, bounds](std::string& input) -> std::string {
        double v = 0.0;
        if (!CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < lo || v > hi)
          return "'" + input + "' is not a number " + bounds;
        return {};
      },
      "NUMBER " + bounds);
}

}  // namespace kiln::cli
