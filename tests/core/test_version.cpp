// kiln::version(), the KILN_VERSION_* macros and the CMake project version agree.
#include <string>

#include <kiln/kiln.hpp>

#include "catch.hpp"

TEST_CASE("the version macros, kiln::version() and the project version agree") {
  const kiln::Version v = kiln::version();
  CHECK(v.major == KILN_VERSION_MAJOR);
  CHECK(v.minor == KILN_VERSION_MINOR);
  CHECK(v.patch == KILN_VERSION_PATCH);
  CHECK(std::string(v.text) == KILN_VERSION_STRING);
  CHECK(std::string(v.text) == KILN_TEST_PROJECT_VERSION);  // project(kiln VERSION ...) in CMakeLists.txt
  CHECK(std::string(v.text) ==
        std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch));
}
