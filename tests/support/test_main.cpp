// One main for every test executable, Catch2 v2 or v3 (the session itself: catch_session.cpp).
// GPU test executables are built with KILN_GPU_TEST: with no usable CUDA device they exit with 77,
// which ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
#include <cstdio>

#include "catch_session.hpp"

#ifdef KILN_GPU_TEST
#include <kiln/device.hpp>
#endif

int main(int argc, char** argv) {
#ifdef KILN_GPU_TEST
  if (kiln::cuda_device_count() == 0) {
    std::printf("no CUDA device: skipping GPU tests\n");
    return 77;
  }
#endif
  return kiln_test_run_catch_session(argc, argv);
}
