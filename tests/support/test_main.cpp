// One main for every test executable, Catch2 v2 or v3.  GPU test executables are built with
// KILN_GPU_TEST: with no usable CUDA device they exit with 77, which ctest reports as skipped
// (SKIP_RETURN_CODE), never as passed.
#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif
#include <cstdio>

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
  return Catch::Session().run(argc, argv);
}
