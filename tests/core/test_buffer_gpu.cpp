#include <kiln/kiln.hpp>

#include <random>

#include "catch.hpp"

namespace {
std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}
}  // namespace

TEST_CASE("device info is filled for CUDA devices") {
  const kiln::DeviceInfo& d = kiln::device_info(kiln::Device::cuda(0));
  CHECK(d.sm_count > 0);
  CHECK(d.cc_major >= 7);
  CHECK(d.smem_per_block_optin >= d.smem_per_block);
  CHECK(d.l2_bytes > 0);
  CHECK(d.driver_version > 0);
  CHECK(d.fingerprint().find("|sm_") != std::string::npos);
}

TEST_CASE("device buffers round-trip random data, dense and pitched") {
  const kiln::Device gpu = kiln::Device::cuda(0);
  for (auto [rows, cols] : {std::pair<int, int>{1, 1}, {3, 5}, {37, 129}, {513, 1001}}) {
    CAPTURE(rows, cols);
    const auto in = random_floats(static_cast<std::size_t>(rows) * cols, rows * 31 + cols);
    auto dense = kiln::Buffer::alloc(gpu, kiln::f32, {rows, cols});
    dense.fill_bytes(0xFF);
    dense.copy_from_host(in.data(), in.size() * 4);
    CHECK(dense.to_host<float>() == in);

    auto pitched = kiln::Buffer::alloc_pitched(gpu, kiln::f32, rows, cols);
    CHECK(pitched.row_stride() >= cols);
    CHECK(pitched.pitch_bytes() % 128 == 0);  // cudaMallocPitch aligns rows
    pitched.fill_bytes(0xFF);
    pitched.copy_from(dense);                 // device to device, strided
    CHECK(pitched.to_host<float>() == in);

    auto host = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {rows, cols});
    host.copy_from(pitched);                  // device to host through the pitch
    CHECK(host.to_host<float>() == in);
  }
}

TEST_CASE("streams can be created and synchronised") {
  kiln::OwnedStream s(kiln::Device::cuda(0));
  CHECK(s.get().handle() != nullptr);
  s.synchronize();
  kiln::OwnedStream moved = std::move(s);
  CHECK(moved.get().handle() != nullptr);
}
