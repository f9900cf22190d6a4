#!/usr/bin/env bash
# The dispatch thread-safety test under ThreadSanitizer (host only, no GPU): one thread tunes and
# writes the database while others call op().  Builds libkiln and the test alone in build-tsan/
# (a few minutes on 2 cores); fails on any ThreadSanitizer report.
#   bash scripts/tsan-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
flags=-fsanitize=thread
cmake -S . -B build-tsan -G Ninja -DKILN_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags" \
  "-DCMAKE_MODULE_LINKER_FLAGS=$flags" >/dev/null
cmake --build build-tsan --target test_dispatch_threads
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" build-tsan/bin/test_dispatch_threads
