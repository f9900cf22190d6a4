#include <kiln/kiln.hpp>

#include "catch.hpp"

TEST_CASE("dtypes have names and sizes and parse back") {
  for (kiln::DType t : kiln::kAllDTypes) CHECK(kiln::parse_dtype(kiln::dtype_name(t)) == t);
  CHECK(kiln::dtype_size(kiln::f32) == 4);
  CHECK(kiln::dtype_size(kiln::bf16) == 2);
  CHECK(kiln::dtype_size(kiln::u8) == 1);
  CHECK(kiln::dtype_size(kiln::i64) == 8);
  REQUIRE_THROWS_AS(kiln::parse_dtype("float"), kiln::ArgumentError);
}

TEST_CASE("the host is always the first device") {
  const auto& devs = kiln::enumerate_devices();
  REQUIRE(!devs.empty());
  CHECK(devs[0].device.is_host());
  CHECK(devs[0].arch() == "host");
  CHECK(kiln::cuda_device_count() == static_cast<int>(devs.size()) - 1);
  REQUIRE_THROWS_AS(kiln::device_info(kiln::Device::cuda(1000)), kiln::DeviceError);
}

TEST_CASE("fingerprints and fallback levels") {
  kiln::DeviceInfo h200;
  h200.device = kiln::Device::cuda(0);
  h200.name = "NVIDIA H200";
  h200.cc_major = 9;
  h200.cc_minor = 0;
  h200.sm_count = 132;
  CHECK(h200.fingerprint() == "NVIDIA H200|sm_90|132sm");
  CHECK(h200.arch() == "sm_90");
  using L = kiln::FallbackLevel;
  CHECK(kiln::fingerprint_matches("NVIDIA H200|sm_90|132sm", h200, L::exact));
  CHECK_FALSE(kiln::fingerprint_matches("NVIDIA H100 80GB HBM3|sm_90|132sm", h200, L::exact));
  CHECK(kiln::fingerprint_matches("NVIDIA H100 80GB HBM3|sm_90|132sm", h200, L::arch_and_sms));
  CHECK_FALSE(kiln::fingerprint_matches("NVIDIA H100 PCIe|sm_90|114sm", h200, L::arch_and_sms));
  CHECK(kiln::fingerprint_matches("NVIDIA H100 PCIe|sm_90|114sm", h200, L::arch));
  CHECK_FALSE(kiln::fingerprint_matches("NVIDIA A100|sm_80|108sm", h200, L::arch));
  CHECK(kiln::fingerprint_matches("NVIDIA A100|sm_80|108sm", h200, L::any));
  // Host entries never serve a GPU, nor the reverse.
  CHECK_FALSE(kiln::fingerprint_matches("Some CPU|host|8t", h200, L::any));
  CHECK_FALSE(kiln::fingerprint_matches("garbage", h200, L::any));
}

TEST_CASE("problem keys print and parse back") {
  auto schema = std::make_shared<kiln::OpSchema>();
  schema->name = "gemm_like";
  schema->dim_names = {"m", "n", "k"};
  schema->dtypes = {kiln::f32};
  schema->dim_defaults = {{"k", 7}};
  kiln::Problem p = schema->problem_from_shape(kiln::f32, "4096x4096x4096", kiln::Device::host());
  CHECK(p.key() == "f32|m=4096|n=4096|k=4096");
  CHECK(p.dim("k") == 4096);
  kiln::ParsedKey parsed;
  REQUIRE(kiln::parse_problem_key(p.key(), parsed));
  CHECK(parsed.n_dims == 3);
  CHECK(parsed.names[2] == "k");
  CHECK(parsed.dims[1] == 4096);
  CHECK_FALSE(kiln::parse_problem_key("f99|m=1", parsed));
  CHECK_FALSE(kiln::parse_problem_key("f32|m=x", parsed));
  // Named and defaulted dims.
  kiln::Problem q = schema->problem_from_shape(kiln::f32, "n=3,m=2", kiln::Device::host());
  CHECK(q.key() == "f32|m=2|n=3|k=7");
  REQUIRE_THROWS_AS(schema->problem_from_shape(kiln::f32, "1x2x3x4", kiln::Device::host()), kiln::ShapeError);
  REQUIRE_THROWS_AS(schema->problem_from_shape(kiln::f32, "12", kiln::Device::host()), kiln::ShapeError);
  REQUIRE_THROWS_AS(schema->problem_from_shape(kiln::f32, "1xax3", kiln::Device::host()), kiln::ShapeError);
  REQUIRE_THROWS_AS(schema->problem_from_shape(kiln::f64, "1x2x3", kiln::Device::host()), kiln::DTypeError);
  CHECK(schema->bucket_of(p) == "f32|m~4096|n~4096|k~4096");
  CHECK(schema->bucket_of(schema->problem_from_dims(kiln::f32, {2500, 5000, 1}, kiln::Device::host())) ==
        "f32|m~2048|n~4096|k~1");
}

TEST_CASE("alignment classes") {
  CHECK(kiln::alignment_of(0) == 16);
  CHECK(kiln::alignment_of(256) == 16);
  CHECK(kiln::alignment_of(8) == 8);
  CHECK(kiln::alignment_of(4) == 4);
  CHECK(kiln::alignment_of(3) == 1);
}
