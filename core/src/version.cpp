#include "kiln/version.hpp"

namespace kiln {

// Compiled into libkiln, so a program learns the version of the library it loaded.
Version version() noexcept {
  return Version{KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH, KILN_VERSION_STRING};
}

}  // namespace kiln
