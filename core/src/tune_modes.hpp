// KILN_TUNE modes, installed into a Runtime's dispatcher at construction: "off" (nothing),
// "lazy" (tune a problem on its first database miss), "record" (append each new problem key to
// $KILN_TUNE_RECORD_FILE, default kiln-problems.txt, for a later `kiln tune --from FILE`).
// Implemented by the tuner (tuner/src/tune_modes.cpp); an unknown mode is an ArgumentError.
#pragma once
#include <string>
#include <vector>

namespace kiln {
class Runtime;
namespace detail {
inline const std::vector<std::string>& tune_mode_names() {
  static const std::vector<std::string> names = {"off", "lazy", "record"};
  return names;
}
void install_tune_mode(Runtime& rt, const std::string& mode);
}  // namespace detail
}  // namespace kiln
