// A plugin whose register function calls a function no library defines: it links (a module may
// leave symbols undefined) and must be refused when it is loaded, not end the process when kiln
// calls it.
#include <kiln/plugin.hpp>

void kiln_fixture_function_nobody_defines();

namespace {

kiln::Status register_unresolved(kiln::Registry&) noexcept {
  kiln_fixture_function_nobody_defines();
  return {};
}

}  // namespace

KILN_PLUGIN("fixture_unresolved", "0.1.0", register_unresolved)
