// kiln::scalar_text (kiln/errors.hpp): scalars in error messages read back as what was passed.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "catch.hpp"
#include "kiln/errors.hpp"

TEST_CASE("scalar_text prints the shortest text that reads back as the same double") {
  CHECK(kiln::scalar_text(0.0) == "0");
  CHECK(kiln::scalar_text(1.0) == "1");
  CHECK(kiln::scalar_text(0.5) == "0.5");
  CHECK(kiln::scalar_text(-2.25) == "-2.25");
  CHECK(kiln::scalar_text(1e-9) == "1e-09");       // std::to_string: "0.000000"
  CHECK(kiln::scalar_text(1e300) == "1e+300");     // std::to_string: 301 digits
  CHECK(kiln::scalar_text(0.1) == "0.1");
  CHECK(kiln::scalar_text(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(kiln::scalar_text(-std::numeric_limits<double>::infinity()) == "-inf");
  const std::string nan = kiln::scalar_text(std::numeric_limits<double>::quiet_NaN());
  CHECK(nan.find("nan") != std::string::npos);
  for (double v : {1.0 / 3.0, 2.0 / 3.0, 123456789.123456789, 5e-324, std::numeric_limits<double>::max(), -0.0}) {
    const std::string t = kiln::scalar_text(v);
    INFO(t);
    CHECK(std::strtod(t.c_str(), nullptr) == v);
    CHECK(t.size() <= 24);
  }
}
