// KILN_TUNE modes, installed into a Runtime's dispatcher at construction: "off" (nothing),
// "race" (the default: a miss decided from other problems' evidence times the prediction against
// the runner-up on the problem, tuner/include/kiln/tuner/first_use_race.hpp), "lazy" (tune a problem on its first database miss), "record" (append each new problem key to
// $KILN_TUNE_RECORD_FILE, default kiln-problems.txt, for a later `kiln tune --from FILE`).
//
// The core does not link the tuner.  install_tune_mode() (tune_modes.cpp) finds the tuner's entry,
// kiln_tuner_install_tune_mode, in the process (a program linked with kiln::tuner) or loads
// libkiln_tuner.so from libkiln's own directory; the tuner then installs its miss handler and
// problem observer through the Dispatcher's interface (tuner/src/tune_modes.cpp).
#pragma once
#include <string>
#include <vector>

namespace kiln {
class Runtime;
namespace detail {
inline const std::vector<std::string>& tune_mode_names() {
  static const std::vector<std::string> names = {"off", "race", "lazy", "record"};
  return names;
}
// Throws ArgumentError for an unknown mode.  Returns false (after a warning naming what is
// missing, at debug level when `quiet`) when the mode needs the tuner and no tuner library can be
// found: op() then does not tune.
bool install_tune_mode(Runtime& rt, const std::string& mode, bool quiet = false);
}  // namespace detail
}  // namespace kiln

// The tuner's entry (defined in libkiln_tuner): installs `mode` ("race", "lazy" or "record") into rt.
extern "C" void kiln_tuner_install_tune_mode(kiln::Runtime& rt, const char* mode);
