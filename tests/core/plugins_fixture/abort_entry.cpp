// A library whose static initialiser aborts: loading it kills the loading process, whatever the
// loader does.  Only `kiln plugins check` (which loads it in a child process) ever touches it.
#include <cstdlib>

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;
}  // namespace
