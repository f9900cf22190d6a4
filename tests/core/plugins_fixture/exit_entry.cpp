// A library whose static initialiser ends the process with status 0: `kiln list` would stop
// silently and "succeed".  Only `kiln plugins check` touches it.
#include <cstdlib>

namespace {
struct ExitOnLoad {
  ExitOnLoad() { std::exit(0); }
} exit_on_load;
}  // namespace
