// Times the histogram variants against CUB (histogram_cub, histogram_range_cub) on data kinds
// `kiln bench` cannot draw (its inputs are uniform): skewed, runs, few values, one value; printed
// (one `histperf` line per timing, CUB measured in the same run), and each result checked against
// CUB's (or, where CUB cannot run, against the repeated pattern's histogram).  Hidden: run with
//   test_histogram_perf_gpu "[perf]"
// KILN_HISTPERF_KINDS / KILN_HISTPERF_SIZES (comma lists) restrict the u8 kinds and sizes;
// KILN_HISTPERF_NO4G skips the 4 GiB run; KILN_HISTPERF_BINS the histogram_range bin counts;
// KILN_HISTPERF_CONFIGS the configs timed (see configs_of).
#include <cuda_runtime.h>

#include <kiln/buffer.hpp>
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
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

// Bytes of one data kind (xorshift, seeded per kind).  The first five kinds were looked at while
// choosing the adaptive paths' thresholds; `two`, `sixteen` and `shortruns` are held out.
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
    } else if (kind == "two") {  // two values, half and half
      out[i++] = (r >> 9) & 1 ? std::uint8_t(200) : std::uint8_t(7);
    } else if (kind == "sixteen") {  // sixteen values, random
      out[i++] = std::uint8_t((r >> 3) & 15);
    } else if (kind == "shortruns") {  // runs of 1 to 8 equal bytes
      for (std::size_t run = 1 + (r >> 8) % 8; run > 0 && i < n; --run) out[i++] = std::uint8_t(r);
    } else {  // constant
      out[i++] = 0x5A;
    }
  }
  return out;
}

std::vector<std::string> list_env(const char* name, const std::vector<std::string>& fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return fallback;
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Median of 15 runs after 3 warm-ups, the L2 flushed (a 256 MiB memset) before each, in
// microseconds; `result` gets the bins of the last run.
struct Timer {
  kiln::Buffer flush = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::u8, {std::int64_t(256) << 20});
  cudaEvent_t start{}, stop{};
  Timer() {
    REQUIRE(cudaEventCreate(&start) == cudaSuccess);
    REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  double time(const kiln::Variant& v, const kiln::Config& c, const kiln::Args& args, const kiln::Problem& p,
              kiln::Buffer& bins, std::vector<std::uint32_t>& result) {
    const kiln::Device gpu = kiln::Device::cuda(0);
    kiln::Buffer ws = kiln::Buffer::alloc(gpu, kiln::u8, {std::max<std::int64_t>(1, v.workspace_bytes(p, c))});
    bins.fill_bytes(0xFF);
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
  }
};

// The configs timed for variant v: those KILN_HISTPERF_CONFIGS names for it ("variant:config"
// entries separated by ';', e.g. "histogram_spill:block=768,blocks_per_sm=1,adaptive=0"), else its
// default, and for u8 every value of `adaptive`.
std::vector<kiln::Config> configs_of(const kiln::Variant& v, const kiln::DeviceInfo& dev) {
  if (const char* env = std::getenv("KILN_HISTPERF_CONFIGS")) {
    std::vector<kiln::Config> named;
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ';');) {
      const auto colon = item.find(':');
      if (colon != std::string::npos && item.substr(0, colon) == v.name())
        named.push_back(kiln::Config::parse(item.substr(colon + 1)));
    }
    return named;
  }
  std::vector<kiln::Config> out{v.default_config(dev)};
  if (!out.front().has("adaptive")) return out;
  out.clear();
  for (int a : {0, 1}) {
    kiln::Config c = v.default_config(dev);
    c.set("adaptive", a);
    out.push_back(c);
  }
  return out;
}

void print(const char* kind, std::int64_t n, std::int64_t bytes, const std::string& what, double us, double cub_us) {
  if (cub_us > 0) {
    std::printf("histperf %-9s n=%-10lld %-52s %8.1f us %5.0f GB/s | CUB %8.1f us %5.0f GB/s | %.2fx\n", kind,
                static_cast<long long>(n), what.c_str(), us, double(bytes) / us * 1e-3, cub_us,
                double(bytes) / cub_us * 1e-3, cub_us / us);
  } else {
    std::printf("histperf %-9s n=%-10lld %-52s %8.1f us %5.0f GB/s | CUB -\n", kind, static_cast<long long>(n),
                what.c_str(), us, double(bytes) / us * 1e-3);
  }
  std::fflush(stdout);
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
  for (const char* name : {"histogram_spill", "histogram_thread_private"}) {
    mine.push_back(rt.registry().find_variant(name));
    REQUIRE(mine.back() != nullptr);
  }
  const std::int64_t kPattern = std::int64_t(64) << 20;
  const std::int64_t kMax = std::int64_t(1) << 30;
  kiln::Buffer data = kiln::Buffer::alloc(gpu, kiln::u8, {kMax});
  kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {256});
  Timer timer;

  // The sizes of issue 12 (64 KiB to 1 GiB) and held-out odd ones (3 MiB + 7, 200000001).
  const std::vector<std::string> sizes =
      list_env("KILN_HISTPERF_SIZES", {"65536", "1048576", "3145735", "67108864", "200000001", "1073741824"});
  const std::vector<std::string> kinds = list_env(
      "KILN_HISTPERF_KINDS", {"uniform", "skewed", "runs", "four", "constant", "two", "sixteen", "shortruns"});
  for (const std::string& kind_name : kinds) {
    const char* kind = kind_name.c_str();
    const std::vector<std::uint8_t> host = pattern(kind_name, std::size_t(kPattern));
    for (std::int64_t at = 0; at < kMax; at += kPattern) {
      REQUIRE(cudaMemcpy(static_cast<std::uint8_t*>(data.data()) + at, host.data(), host.size(),
                         cudaMemcpyHostToDevice) == cudaSuccess);
    }
    for (const std::string& size : sizes) {
      const std::int64_t n = std::stoll(size);
      if (n > kMax) continue;
      const kiln::TensorRef view = kiln::TensorRef::vector(data.data(), kiln::u8, n, gpu);
      const kiln::Args args({view, bins.ref()});
      const kiln::Problem p = rt.make_problem(schema, args);
      std::vector<std::uint32_t> expected, got;
      const double cub_us = timer.time(*cub, cub->default_config(dev), args, p, bins, expected);
      for (const kiln::Variant* v : mine) {
        for (const kiln::Config& c : configs_of(*v, dev)) {
          const double us = timer.time(*v, c, args, p, bins, got);
          CHECK(got == expected);
          print(kind, n, n, v->name() + " " + c.to_string(), us, cub_us);
        }
      }
    }
  }

  // 4 GiB of uniform bytes (CUB takes int sample counts): checked against 64 times the
  // pattern's histogram.  KILN_HISTPERF_NO4G skips it.
  if (std::getenv("KILN_HISTPERF_NO4G") == nullptr) {
    const std::int64_t n4 = std::int64_t(4) << 30;
    kiln::Buffer big = kiln::Buffer::alloc(gpu, kiln::u8, {n4});
    const std::vector<std::uint8_t> host = pattern("uniform", std::size_t(kPattern));
    std::vector<std::uint32_t> expected(256, 0), got;
    for (std::uint8_t b : host) expected[b] += std::uint32_t(n4 / kPattern);
    for (std::int64_t at = 0; at < n4; at += kPattern) {
      REQUIRE(cudaMemcpy(static_cast<std::uint8_t*>(big.data()) + at, host.data(), host.size(),
                         cudaMemcpyHostToDevice) == cudaSuccess);
    }
    const kiln::TensorRef view = kiln::TensorRef::vector(big.data(), kiln::u8, n4, gpu);
    const kiln::Args args({view, bins.ref()});
    const kiln::Problem p = rt.make_problem(schema, args);
    for (const kiln::Variant* v : mine) {
      for (const kiln::Config& c : configs_of(*v, dev)) {
        const double us = timer.time(*v, c, args, p, bins, got);
        CHECK(got == expected);
        print("uniform", n4, n4, v->name() + " " + c.to_string(), us, 0.0);
      }
    }
  }
}

TEST_CASE("histogram_range variants against CUB (printed)", "[.][perf][histogram_range]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram_range");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* cub = rt.registry().find_variant("histogram_range_cub");
  REQUIRE(cub != nullptr);
  std::vector<const kiln::Variant*> mine;
  for (const char* name : {"histogram_range_spill", "histogram_range_thread_private", "histogram_range_warp_private"}) {
    mine.push_back(rt.registry().find_variant(name));
    REQUIRE(mine.back() != nullptr);
  }
  const std::int64_t kMax = std::int64_t(1) << 28;
  // Uniform in [-0.1, 1.1) (as the schema's input distribution) with lo = 0, hi = 1.
  std::vector<float> host(std::size_t(1) << 24);
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<float> u(-0.1f, 1.1f);
  for (float& x : host) x = u(rng);
  kiln::Buffer data = kiln::Buffer::alloc(gpu, kiln::f32, {kMax});
  for (std::int64_t at = 0; at < kMax; at += std::int64_t(host.size())) {
    REQUIRE(cudaMemcpy(static_cast<float*>(data.data()) + at, host.data(), host.size() * sizeof(float),
                       cudaMemcpyHostToDevice) == cudaSuccess);
  }
  Timer timer;
  // Bins 1 to 256 (thread_private's limit); 100 and 2^24 + 3 floats held out.
  std::vector<std::int64_t> range_bins;
  for (const std::string& b : list_env("KILN_HISTPERF_BINS", {"1", "7", "64", "100", "256"}))
    range_bins.push_back(std::stoll(b));
  for (std::int64_t n : {std::int64_t(1) << 20, (std::int64_t(1) << 24) + 3, kMax}) {
    for (std::int64_t nbins : range_bins) {
      kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {nbins});
      const kiln::TensorRef view = kiln::TensorRef::vector(data.data(), kiln::f32, n, gpu);
      const kiln::Args args({view, bins.ref()}, {0.0, 1.0});
      const kiln::Problem p = rt.make_problem(schema, args);
      std::vector<std::uint32_t> expected, got;
      const double cub_us = timer.time(*cub, cub->default_config(dev), args, p, bins, expected);
      for (const kiln::Variant* v : mine) {
        for (const kiln::Config& c : configs_of(*v, dev)) {
          if (!v->supports(p, dev, c).ok) continue;
          const double us = timer.time(*v, c, args, p, bins, got);
          CHECK(got == expected);
          print("f32", n, 4 * n, v->name() + " bins=" + std::to_string(nbins) + " " + c.to_string(), us, cub_us);
        }
      }
    }
  }
}
