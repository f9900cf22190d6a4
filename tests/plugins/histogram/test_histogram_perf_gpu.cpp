// Times the u8 histogram variants against CUB (histogram_cub) on data kinds `kiln bench` cannot
// draw (its inputs are uniform): skewed, runs, four values, one value; printed, and each result
// checked against CUB's.  Hidden: run with `test_histogram_perf_gpu "[perf]"`.
#include <cuda_runtime.h>

#include <kiln/buffer.hpp>
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "register_histogram.hpp"
#include "register_vendor.hpp"
#include "test_util.hpp"

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  REQUIRE(register_histogram(reg).ok());
  REQUIRE(register_vendor(reg).ok());
  return reg;
}

// 64 MiB of one data kind (xorshift, seeded per kind): the pattern larger inputs repeat.
std::vector<std::uint8_t> pattern(const std::string& kind, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ull ^ std::hash<std::string>{}(kind);
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  std::size_t i = 0;
  while (i < n) {
    const std::uint64_t r = next();
    if (kind == "uniform") {
      out[i++] = std::uint8_t(r);
    } else if (kind == "skewed") {  // nine in ten bytes 0x37
      out[i++] = (r >> 8) % 10 != 0 ? std::uint8_t(0x37) : std::uint8_t(r);
    } else if (kind == "runs") {  // runs of 1 to 64 equal bytes
      for (std::size_t run = 1 + (r >> 8) % 64; run > 0 && i < n; --run) out[i++] = std::uint8_t(r);
    } else if (kind == "four") {  // four values, random
      out[i++] = std::uint8_t(r & 3);
    } else {  // constant
      out[i++] = 0x5A;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("histogram variants against CUB on skewed and constant data (printed)", "[.][perf][histogram]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* cub = rt.registry().find_variant("histogram_cub");
  REQUIRE(cub != nullptr);
  std::vector<const kiln::Variant*> mine;
  for (const char* name : {"histogram_thread_private", "histogram_warp_private"}) {
    mine.push_back(rt.registry().find_variant(name));
    REQUIRE(mine.back() != nullptr);
  }
  const std::int64_t kPattern = std::int64_t(64) << 20;
  const std::int64_t kMax = std::int64_t(1) << 30;
  kiln::Buffer data = kiln::Buffer::alloc(gpu, kiln::u8, {kMax});
  kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {256});
  kiln::Buffer flush = kiln::Buffer::alloc(gpu, kiln::u8, {std::int64_t(256) << 20});
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);

  for (const char* kind : {"uniform", "skewed", "runs", "four", "constant"}) {
    const std::vector<std::uint8_t> host = pattern(kind, std::size_t(kPattern));
    for (std::int64_t at = 0; at < kMax; at += kPattern) {
      REQUIRE(cudaMemcpy(static_cast<std::uint8_t*>(data.data()) + at, host.data(), host.size(),
                         cudaMemcpyHostToDevice) == cudaSuccess);
    }
    for (std::int64_t n : {std::int64_t(64) << 10, std::int64_t(1) << 20, std::int64_t(64) << 20, kMax}) {
      const kiln::TensorRef view = kiln::TensorRef::vector(data.data(), kiln::u8, n, gpu);
      const kiln::Args args({view, bins.ref()});
      const kiln::Problem p = rt.make_problem(schema, args);
      // Median of 15 runs after 3 warm-ups, the L2 flushed before each; the bins of the last run.
      auto time = [&](const kiln::Variant& v, const kiln::Config& c, std::vector<std::uint32_t>& result) {
        kiln::Buffer ws = kiln::Buffer::alloc(gpu, kiln::u8, {std::max<std::int64_t>(1, v.workspace_bytes(p, c))});
        std::vector<float> ms;
        for (int i = 0; i < 18; ++i) {
          REQUIRE(cudaMemsetAsync(flush.data(), i, std::size_t(256) << 20) == cudaSuccess);
          REQUIRE(cudaEventRecord(start) == cudaSuccess);
          REQUIRE(v.launch(args, p, c, ws.data(), kiln::Stream()).ok());
          REQUIRE(cudaEventRecord(stop) == cudaSuccess);
          REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
          float t = 0;
          REQUIRE(cudaEventElapsedTime(&t, start, stop) == cudaSuccess);
          if (i >= 3) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        result = bins.to_host<std::uint32_t>();
        return double(ms[ms.size() / 2]) * 1e3;
      };
      std::vector<std::uint32_t> expected, got;
      const double cub_us = time(*cub, cub->default_config(dev), expected);
      for (const kiln::Variant* v : mine) {
        std::vector<kiln::Config> configs{v->default_config(dev)};
        if (configs.front().has("adaptive")) {  // every mode
          configs.clear();
          for (int a : {0, 1, 2}) {
            kiln::Config c = v->default_config(dev);
            c.set("adaptive", a);
            configs.push_back(c);
          }
        }
        for (const kiln::Config& c : configs) {
          bins.fill_bytes(0xFF);
          const double us = time(*v, c, got);
          CHECK(got == expected);
          std::printf("histperf %-8s n=%-10lld %-24s adaptive=%d %8.1f us %5.0f GB/s | CUB %8.1f us %5.0f GB/s | %.2fx\n",
                      kind, static_cast<long long>(n), v->name().c_str(), c.get_or("adaptive", -1), us,
                      double(n) / us * 1e-3, cub_us, double(n) / cub_us * 1e-3, cub_us / us);
        }
      }
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}
