// A sticky CUDA fault (an illegal address) while tuning: the candidate is a fault with
// device_lost, the search stops at once, reports how many candidates were not evaluated, and
// chooses and stores nothing.  Its own executable: the CUDA context is unusable afterwards.
#include <filesystem>

#include <kiln/tuner/tuner.hpp>

#include "catch.hpp"
#include "gpu/cuda_scale_variants.hpp"
#include "scale_op.hpp"

TEST_CASE("an illegal address loses the device: the search stops cleanly, nothing is stored") {
  const std::string user =
      (std::filesystem::temp_directory_path() / "kiln_tuner_gpu_fault_never_written.yaml").string();
  std::filesystem::remove(user);
  kiln::Registry reg;
  reg.add_op(kiln_test::scale_schema());
  reg.add_variant(kiln_test::make_scale_cuda());      // 4 configs, priority 10
  reg.add_variant(kiln_test::make_scale_cuda_oob());  // 1 config, priority 1
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options(user));
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=10000", kiln::Device::cuda(0));
  const kiln::TuneReport r = kiln::Tuner(rt).tune(p);
  // Order: scale_cuda's default, scale_cuda_oob's default (faults), then the rest (never run).
  REQUIRE(r.search.results.size() == 2);
  CHECK(r.search.results[0].ok());
  CHECK(r.search.results[1].outcome == kiln::Outcome::fault);
  CHECK(r.search.results[1].device_lost);
  CHECK(r.search.device_lost);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.stored);
  CHECK(r.error.find("3 candidate(s) could not be evaluated") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(user));
}
