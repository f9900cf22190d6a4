#include "tune_modes.hpp"

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::detail {

void install_tune_mode(Runtime& rt, const std::string& mode) {
  (void)rt;
  if (mode == "off") return;
  throw ArgumentError("KILN_TUNE='" + mode + "': expected off (lazy and record are not built yet)");
}

}  // namespace kiln::detail
