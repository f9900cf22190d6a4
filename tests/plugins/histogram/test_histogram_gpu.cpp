// Every CUDA variant of `histogram` and `histogram_range`, with every config of its space (a
// fixed sample plus the default for the largest inputs), against the host reference:
// kiln::ProblemData for fresh random inputs with poisoned outputs, and hand-built buffers for
// constant data (all elements in one bin: the contended case) and views starting at every
// misalignment.  Finally op() on device buffers, end to end.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "quick.hpp"
#include "register_histogram.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_histogram(reg);
  REQUIRE(s.ok());
  return reg;
}

// KILN_HISTOGRAM_TEST_ONLY (a comma list of name parts, e.g. "spill,thread_private") keeps only
// the variants whose name contains one of them: the sanitizers on the variants a change touched.
bool selected(const std::string& name) {
  const char* only = std::getenv("KILN_HISTOGRAM_TEST_ONLY");
  if (only == nullptr || *only == 0) return true;
  std::stringstream ss(only);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty() && name.find(part) != std::string::npos) return true;
  return false;
}
bool filtered() { return std::getenv("KILN_HISTOGRAM_TEST_ONLY") != nullptr; }

std::vector<const kiln::Variant*> cuda_variants(const kiln::Registry& reg, const std::string& op) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants(op))
    if (v->device_kind() == kiln::DeviceKind::cuda && selected(v->name())) out.push_back(v);
  return out;
}

// Every valid config when there are at most `limit`, else the default plus a fixed random sample.
// Under KILN_TEST_QUICK (compute-sanitizer runs, where racecheck slows shared-memory kernels
// ~1000x) at most 6: the default and a sample.
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                      std::size_t limit) {
  if (kiln_test::quick_mode()) limit = std::min<std::size_t>(limit, 6);
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  if (all.size() <= limit) return all;
  std::vector<kiln::Config> out;
  const kiln::Config def = v.default_config(dev);
  if (!v.space().violated(def, dev, p)) out.push_back(def);
  std::mt19937_64 rng(all.size());
  std::shuffle(all.begin(), all.end(), rng);
  for (const kiln::Config& c : all) {
    if (out.size() >= limit) break;
    if (c != def) out.push_back(c);
  }
  return out;
}

const kiln::Stream kStream;  // the legacy stream: ordered after the synchronous copies and fills

// Runs variant v with config c on device args whose bins are `bins` (poisoned first); the bins.
std::vector<std::uint32_t> run(const kiln::Variant& v, const kiln::Config& c, const kiln::Args& args,
                               const kiln::Problem& p, kiln::Buffer& bins) {
  bins.fill_bytes(0xFF);
  const kiln::Status st = v.launch(args, p, c, nullptr, kStream);
  REQUIRE(st.ok());
  kStream.synchronize();
  return bins.to_host<std::uint32_t>();
}

// The reference bins for host data (scalars as in `scalars`).
std::vector<std::uint32_t> reference(kiln::Runtime& rt, const kiln::OpSchema& schema, const kiln::Buffer& data,
                                     std::int64_t nbins, std::initializer_list<double> scalars) {
  kiln::Buffer bins = kiln::Buffer::alloc(kiln::Device::host(), kiln::u32, {nbins});
  kiln::Args args({data, bins}, scalars);
  const kiln::Problem p = rt.make_problem(schema, args);
  REQUIRE(schema.reference(args, p).ok());
  return bins.to_host<std::uint32_t>();
}

// Bytes of one data kind (see the constant-data test) into host[i, end).
void fill_kind(std::vector<std::uint8_t>& host, std::size_t i, std::size_t end, int fill, std::mt19937_64& rng) {
  while (i < end) {
    if (fill >= 0) {
      host[i++] = std::uint8_t(fill);
    } else if (fill == -1) {
      host[i++] = std::uint8_t(rng() & 0xFF);
    } else if (fill == -2) {
      host[i++] = rng() % 10 != 0 ? std::uint8_t(0x37) : std::uint8_t(rng() & 0xFF);
    } else if (fill == -3) {
      const std::uint8_t b = std::uint8_t(rng() & 0xFF);
      for (std::size_t run = 1 + rng() % 64; run > 0 && i < end; --run) host[i++] = b;
    } else {  // -4: four values, random
      host[i++] = std::uint8_t(0x90 + (rng() & 3) * 0x21);
    }
  }
}

// -5: segments of 1 to 40000 bytes, each of a random kind of the others, so that the adaptive
// kernels change path inside a block, a warp's batch and a load.
void fill_bytes(std::vector<std::uint8_t>& host, int fill, std::mt19937_64& rng) {
  if (fill != -5) return fill_kind(host, 0, host.size(), fill, rng);
  for (std::size_t i = 0; i < host.size();) {
    const std::size_t end = std::min(host.size(), i + 1 + rng() % 40000);
    const int kinds[] = {-1, -2, -3, -4, 0xC3};
    fill_kind(host, i, end, kinds[rng() % 5], rng);
    i = end;
  }
}

const std::int64_t kSizes[] = {1, 15, 16, 17, 1000003, (std::int64_t(1) << 24) | 5};

}  // namespace

TEST_CASE("every CUDA histogram variant and config matches the host reference", "[histogram][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry(), "histogram");
  REQUIRE(variants.size() == (filtered() ? variants.size() : 5));

  std::uint64_t seed = 100;
  for (std::int64_t n : kSizes) {
    if (kiln_test::skip_when_quick(double(n))) continue;
    kiln::ProblemData data(schema, schema.problem_from_dims(kiln::u8, {n}, gpu), gpu, seed++);
    const kiln::Problem& p = data.problem();
    for (const kiln::Variant* v : variants) {
      CHECK(!v->space().violated(v->default_config(dev), dev, p));
      const auto configs = configs_for(*v, dev, p, n > 1000003 ? 48 : 1000);
      REQUIRE(!configs.empty());
      for (const kiln::Config& c : configs) {
        INFO(v->name() << " " << c.to_string() << " n=" << n);
        const kiln::Support s = v->supports(p, dev, c);
        REQUIRE(s.ok);  // u8 histograms have no limits
        data.poison_outputs();
        REQUIRE(v->launch(data.device_args(), p, c, nullptr, kStream).ok());
        kStream.synchronize();
        CHECK(data.error() == 0.0);
      }
    }
  }
}

TEST_CASE("every CUDA histogram_range variant and config matches the host reference", "[histogram_range][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram_range");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry(), "histogram_range");
  REQUIRE(variants.size() == (filtered() ? variants.size() : 5));

  struct Case {
    std::int64_t n, bins;
  };
  std::vector<Case> cases;
  for (std::int64_t n : kSizes) cases.push_back({n, 256});
  for (std::int64_t bins : {1, 7, 4096, 5000, 70000}) cases.push_back({1000003, bins});
  cases.push_back({17, 4096});
  cases.push_back({(std::int64_t(1) << 26) + 1, 256});  // several flush rounds of thread_private

  std::uint64_t seed = 200;
  for (const Case& cs : cases) {
    if (kiln_test::skip_when_quick(double(cs.n))) continue;
    kiln::ProblemData data(schema, schema.problem_from_dims(kiln::f32, {cs.n, cs.bins}, gpu), gpu, seed++);
    const kiln::Problem& p = data.problem();
    for (const kiln::Variant* v : variants) {
      const auto configs = configs_for(*v, dev, p, cs.n > (std::int64_t(1) << 25) ? 12 : cs.n > 1000003 ? 48 : 400);
      if (v->name() == "histogram_range_warp_private" && cs.bins * 4 > std::int64_t(dev.smem_per_block_optin)) {
        CHECK(configs.empty());  // no number of copies fits in shared memory
        continue;
      }
      REQUIRE(!configs.empty());
      for (const kiln::Config& c : configs) {
        INFO(v->name() << " " << c.to_string() << " n=" << cs.n << " bins=" << cs.bins);
        const kiln::Support s = v->supports(p, dev, c);
        if (!s.ok) {
          // The one-histogram-per-block variant is limited by the shared memory, the per-thread
          // 8-bit counters by 256 bins.
          if (v->name() == "histogram_range_thread_private" || v->name() == "histogram_range_spill") {
            CHECK(cs.bins > 256);
            CHECK(contains(s.reason, "256"));
          } else {
            CHECK(v->name() == "histogram_range_smem");
            CHECK(cs.bins * 4 > std::int64_t(dev.smem_per_block_optin));
            CHECK(contains(s.reason, "shared memory"));
          }
          continue;
        }
        data.poison_outputs();
        REQUIRE(v->launch(data.device_args(), p, c, nullptr, kStream).ok());
        kStream.synchronize();
        CHECK(data.error() == 0.0);
      }
    }
  }
}

TEST_CASE("histogram variants handle constant data and views at every misalignment", "[histogram][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry(), "histogram");
  kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {256});

  // 2^26 + 3: several flush rounds per thread of thread_private, counters near their 8-bit limit.
  // 40009 (kept under KILN_TEST_QUICK): a few batches per thread, so the sanitizers see the
  // adaptive paths change.
  for (std::int64_t n : {std::int64_t(1), std::int64_t(17), std::int64_t(40), std::int64_t(40009), std::int64_t(1000003),
                         (std::int64_t(1) << 24) | 5, (std::int64_t(1) << 26) + 3}) {
    if (kiln_test::skip_when_quick(double(n))) continue;
    // -1: random bytes; -2: skewed (nine in ten bytes 0x37, the rest random); -3: runs of 1 to 64
    // equal bytes (some loads all one byte, some mixed); -4: four values; -5: segments of all
    // these kinds; else every byte `fill`.
    for (int fill : {-1, -2, -3, -4, -5, 0, 0x5A, 255}) {
      if (kiln_test::quick_mode() && n > 1000 && fill != -5) continue;  // the sanitizers: the mix only
      std::vector<std::uint8_t> host(static_cast<std::size_t>(n));
      std::mt19937_64 rng(std::uint64_t(n) * 7 + std::uint64_t(fill + 3));
      fill_bytes(host, fill, rng);
      kiln::Buffer h = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {n});
      h.copy_from_host(host.data(), host.size());
      const std::vector<std::uint32_t> expected = reference(rt, schema, h, 256, {});
      kiln::Buffer base = kiln::Buffer::alloc(gpu, kiln::u8, {n + 16});
      const bool big = n > 1000003;
      // Two offsets for large inputs (and, under the sanitizers, for 40009 bytes).
      const bool few_offsets = big || (kiln_test::quick_mode() && n > 1000);
      for (int offset : {0, 1, 3, 8, 15}) {
        if (few_offsets && offset != 0 && offset != 3) continue;
        const kiln::TensorRef view =
            kiln::TensorRef::vector(static_cast<std::uint8_t*>(base.data()) + offset, kiln::u8, n, gpu);
        kiln::copy(view, h.ref());
        const kiln::Args args({view, bins.ref()});
        const kiln::Problem p = rt.make_problem(schema, args);
        for (const kiln::Variant* v : variants) {
          for (const kiln::Config& c : configs_for(*v, dev, p, big ? 12 : 40)) {
            INFO(v->name() << " " << c.to_string() << " n=" << n << " fill=" << fill << " offset=" << offset);
            REQUIRE(v->supports(p, dev, c).ok);
            CHECK(run(*v, c, args, p, bins) == expected);
          }
        }
      }
    }
  }
}

// thread_private configs the sampled ones may miss: adaptive 2, the block's shared atomics
// (few-valued batches) next to the private counters, at both residencies and with `few_bins` from
// never (0: a warp's 32 sampled bytes take at least one value) to always (32); ilp 0, the private
// counters bumped by shared atomics, with and without the runs path; the flush by loads and
// stores (exchange=0) next to the default atomicExch.
TEST_CASE("histogram_thread_private adaptive 2 and ilp 0 match the reference on mixed data",
          "[histogram][gpu]") {
  if (!selected("histogram_thread_private")) return;
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("histogram_thread_private");
  REQUIRE(v != nullptr);
  kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {256});
  for (std::int64_t n : {std::int64_t(40009), std::int64_t(1000003), (std::int64_t(1) << 24) + 5}) {
    if (kiln_test::skip_when_quick(double(n))) continue;
    for (int fill : {-1, -2, -4, -5}) {
      std::vector<std::uint8_t> host(static_cast<std::size_t>(n));
      std::mt19937_64 rng(std::uint64_t(n) * 11 + std::uint64_t(fill + 7));
      fill_bytes(host, fill, rng);
      kiln::Buffer h = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {n});
      h.copy_from_host(host.data(), host.size());
      const std::vector<std::uint32_t> expected = reference(rt, schema, h, 256, {});
      kiln::Buffer base = kiln::Buffer::alloc(gpu, kiln::u8, {n + 16});
      const kiln::TensorRef view = kiln::TensorRef::vector(static_cast<std::uint8_t*>(base.data()) + 5, kiln::u8, n, gpu);
      kiln::copy(view, h.ref());
      const kiln::Args args({view, bins.ref()});
      const kiln::Problem p = rt.make_problem(schema, args);
      for (const char* text : {"block=256,blocks_per_sm=3,ilp=1,adaptive=2", "block=768,blocks_per_sm=1,ilp=1,adaptive=2",
                               "block=512,blocks_per_sm=1,ilp=2,adaptive=2,few_bins=32",
                               "block=256,blocks_per_sm=3,ilp=1,adaptive=2,few_bins=0",
                               "block=256,blocks_per_sm=3,ilp=0,adaptive=1", "block=512,blocks_per_sm=1,ilp=0,adaptive=0",
                               "block=768,blocks_per_sm=1,ilp=0,adaptive=1,runs_max=4",
                               "block=256,blocks_per_sm=3,ilp=0,adaptive=1,exchange=0",
                               "block=512,blocks_per_sm=1,ilp=1,adaptive=2,exchange=0"}) {
        const kiln::Config c = kiln::Config::parse(text);
        INFO(text << " n=" << n << " fill=" << fill);
        REQUIRE(v->supports(p, dev, c).ok);
        CHECK(run(*v, c, args, p, bins) == expected);
      }
    }
  }
}

TEST_CASE("histogram_range variants handle scalars, NaN, constant data and 4-byte-aligned views",
          "[histogram_range][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("histogram_range");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry(), "histogram_range");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();

  for (std::int64_t nbins : {10, 4096}) {
    kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {nbins});
    for (std::int64_t n : {std::int64_t(1), std::int64_t(19), std::int64_t(1000003)}) {
      if (kiln_test::skip_when_quick(double(n))) continue;
      for (int kind = 0; kind < 3; ++kind) {  // random with specials, constant inside, constant at lo
        std::vector<float> host(static_cast<std::size_t>(n));
        std::mt19937_64 rng(std::uint64_t(n) * 13 + std::uint64_t(kind));
        std::uniform_real_distribution<float> u(-3.0f, 4.0f);
        const float specials[] = {nan, -nan, inf, -inf, -2.0f, 3.0f, -0.0f, std::nextafter(3.0f, 0.0f)};
        for (std::size_t i = 0; i < host.size(); ++i) {
          if (kind == 1) host[i] = 0.123f;
          else if (kind == 2) host[i] = -2.0f;
          else host[i] = rng() % 16 == 0 ? specials[rng() % 8] : u(rng);
        }
        kiln::Buffer h = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
        h.copy_from_host(host.data(), host.size() * sizeof(float));
        const std::vector<std::uint32_t> expected = reference(rt, schema, h, nbins, {-2.0, 3.0});
        kiln::Buffer base = kiln::Buffer::alloc(gpu, kiln::f32, {n + 4});
        for (int offset : {0, 1, 2, 3}) {  // in floats: 16-, 4-, 8-, 4-byte aligned starts
          const kiln::TensorRef view =
              kiln::TensorRef::vector(static_cast<float*>(base.data()) + offset, kiln::f32, n, gpu);
          kiln::copy(view, h.ref());
          const kiln::Args args({view, bins.ref()}, {-2.0, 3.0});
          const kiln::Problem p = rt.make_problem(schema, args);
          for (const kiln::Variant* v : variants) {
            for (const kiln::Config& c : configs_for(*v, dev, p, n > 1000 ? 12 : 40)) {
              INFO(v->name() << " " << c.to_string() << " n=" << n << " bins=" << nbins << " kind=" << kind
                             << " offset=" << offset);
              if ((v->name() == "histogram_range_thread_private" || v->name() == "histogram_range_spill") &&
                  nbins > 256) {
                CHECK(!v->supports(p, dev, c).ok);  // at most 256 bins
                continue;
              }
              REQUIRE(v->supports(p, dev, c).ok);
              CHECK(run(*v, c, args, p, bins) == expected);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("op() runs histograms on device buffers", "[histogram][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const std::int64_t n = 3000017;
  std::vector<std::uint8_t> bytes(n);
  std::vector<float> floats(n);
  std::mt19937_64 rng(5);
  for (std::int64_t i = 0; i < n; ++i) {
    bytes[i] = std::uint8_t(rng() % 7 == 0 ? 9 : rng() & 0xFF);
    floats[i] = float(rng() % 100000) / 50000.0f - 0.5f;  // [-0.5, 1.5)
  }
  kiln::Buffer hb = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {n});
  hb.copy_from_host(bytes.data(), bytes.size());
  kiln::Buffer hf = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  hf.copy_from_host(floats.data(), floats.size() * sizeof(float));

  kiln::Buffer db = kiln::Buffer::alloc(gpu, kiln::u8, {n});
  db.copy_from(hb.ref());
  kiln::Buffer bins = kiln::Buffer::alloc(gpu, kiln::u32, {256});
  bins.fill_bytes(0xFF);
  rt.op("histogram")({db, bins});
  kStream.synchronize();
  CHECK(bins.to_host<std::uint32_t>() == reference(rt, rt.registry().op("histogram"), hb, 256, {}));

  kiln::Buffer df = kiln::Buffer::alloc(gpu, kiln::f32, {n});
  df.copy_from(hf.ref());
  kiln::Buffer rbins = kiln::Buffer::alloc(gpu, kiln::u32, {1000});
  rbins.fill_bytes(0xFF);
  rt.op("histogram_range")({df, rbins});  // lo = 0, hi = 1
  kStream.synchronize();
  CHECK(rbins.to_host<std::uint32_t>() == reference(rt, rt.registry().op("histogram_range"), hf, 1000, {}));
}
