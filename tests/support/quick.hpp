// KILN_TEST_QUICK (set by scripts/gpu-check.sh for compute-sanitizer runs, where racecheck makes
// shared-memory kernels ~1000x slower): GPU tests keep every variant and kernel but skip their
// large problem sizes (and, where configs differ only in grid size, run one per kernel).  Unset,
// nothing is skipped.
#pragma once
#include <cstdlib>

namespace kiln_test {

inline bool quick_mode() {
  static const bool quick = std::getenv("KILN_TEST_QUICK") != nullptr;
  return quick;
}

// True when `size` (elements, or multiply-adds for gemm) exceeds `limit` in a quick run.
inline bool skip_when_quick(double size, double limit = 70000.0) { return quick_mode() && size > limit; }

}  // namespace kiln_test
