#include "histogram_params.hpp"

#include <kiln/problem.hpp>

#include "histogram_bin.hpp"

namespace kiln::histogram {
namespace {

bool resident(int threads_per_block, int blocks_per_sm) { return threads_per_block * blocks_per_sm <= kThreadsPerSm; }

}  // namespace

std::size_t smem_limit(const DeviceInfo& device) {
  if (device.smem_per_block_optin > 0) return device.smem_per_block_optin;
  if (device.smem_per_block > 0) return device.smem_per_block;
  return 48 * 1024;
}

int bins_of(const Problem& p, bool range) { return range ? static_cast<int>(p.dims[1]) : kByteBins; }

ParamSpace global_atomic_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024}).param("blocks_per_sm", {1, 2, 4, 8, 16});
  s.constraint("block * blocks_per_sm <= 2048 resident threads",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 return resident(c.get("block"), c.get("blocks_per_sm"));
               });
  return s;
}

// Not yet measured on an H200: a full SM of 256-thread blocks.
Config global_atomic_default(const DeviceInfo&) { return {{"block", 256}, {"blocks_per_sm", 8}}; }

ParamSpace smem_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024}).param("blocks_per_sm", {1, 2, 4, 8, 16});
  s.constraint("block * blocks_per_sm <= 2048 resident threads",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 return resident(c.get("block"), c.get("blocks_per_sm"));
               });
  return s;
}

// Not yet measured on an H200: the seed's shape (256 threads), a full SM of blocks.
Config smem_default(const DeviceInfo&) { return {{"block", 256}, {"blocks_per_sm", 8}}; }

ParamSpace thread_private_space(bool range) {
  ParamSpace s;
  s.param("block", {256, 512, 768}).param("blocks_per_sm", {1, 2, 3});
  if (range) s.param("ilp", {0, 1});
  else s.param("ilp", {0, 1, 2}).param("adaptive", {0, 1, 2});
  // ilp 0 (shared atomic updates) is instantiated with adaptive 0 and 1 only.
  if (!range)
    s.constraint("ilp 0 needs adaptive 0 or 1", [](const Config& c, const DeviceInfo&, const Problem&) {
      return c.get("ilp") != 0 || c.get("adaptive") != 2;
    });
  s.constraint("block * 256 bytes (+ 1 KiB with adaptive 2) <= shared memory per block",
               [range](const Config& c, const DeviceInfo& d, const Problem&) {
                 return thread_private_smem_bytes(range, c.get_or("adaptive", 0), c.get("block")) <= smem_limit(d);
               });
  // An SM holds the opt-in limit plus the 1 KiB the runtime reserves per block (sm_80, sm_90);
  // more blocks than fit would run as a second, partial wave.
  s.constraint("blocks_per_sm * (block's shared memory + 1 KiB) <= shared memory per SM",
               [range](const Config& c, const DeviceInfo& d, const Problem&) {
                 const std::size_t per_block =
                     thread_private_smem_bytes(range, c.get_or("adaptive", 0), c.get("block")) + 1024;
                 return std::size_t(c.get("blocks_per_sm")) * per_block <= smem_limit(d) + 1024;
               });
  return s;
}

// u8: block 256, 3 blocks per SM, ilp 1: the fastest on an H200 (kiln tune, 1 GiB uniform u8,
// 2026-11-22).  adaptive 1: on an H200 (2026-11-24, test_histogram_perf_gpu, CUB in the same run)
// 1.04x CUB on 1 GiB of uniform bytes and 1.03x on one repeated byte, where adaptive 0 (the
// 2026-11-22 kernel, 1.14x on uniform bytes) falls to about 0.6x and adaptive 2 gains on few-valued
// data (0.72x against 0.64x) but loses on uniform (0.96x).  Since adaptive 1 keeps to 256 bytes of
// shared memory per thread (2026-11-26) it is as fast as adaptive 0 on uniform bytes: on an H100,
// 454.6 against 457.4 us on 1 GiB (1.09x CUB; with 288 bytes it took 489 us, 1.02x).
// f32: the same residency; 280 us against CUB's 272 on 2^28 floats (0.97x).
// ilp 0 (u8; 2026-11-26, eighth session, H200, test_histogram_perf_gpu, CUB in the same run, the
// non-held-out sizes and kinds): 1 GiB of uniform bytes 349.1 us against 449.2 with ilp 1 (1.42x
// CUB against 1.10x), skewed 343.8 against 447.0, runs 348.0 against 447.6, four values 343.9
// against 446.8, 64 KiB to 64 MiB as fast or faster on every kind.  f32 keeps ilp 1 (ilp 0: 293.4
// against 282.8 us on 2^28 floats, 256 bins).
Config thread_private_default(const DeviceInfo&, bool range) {
  if (range) return {{"block", 256}, {"blocks_per_sm", 3}, {"ilp", 1}};
  return {{"block", 256}, {"blocks_per_sm", 3}, {"ilp", kDefaultIlp}, {"adaptive", kDefaultAdaptive}};
}

ParamSpace spill_space(bool range) {
  ParamSpace s;
  s.param("block", {256, 512, 768}).param("blocks_per_sm", {1, 2, 3});
  if (!range) s.param("adaptive", {0, 1});
  s.constraint("block * 256 + 1 KiB <= shared memory per block",
               [](const Config& c, const DeviceInfo& d, const Problem&) {
                 return std::size_t(c.get("block")) * 256 + kSpillBytesPerBlock <= smem_limit(d);
               });
  // As thread_private: the blocks of an SM must fit its shared memory (1 KiB reserved per block).
  s.constraint("blocks_per_sm * (block * 256 + 2 KiB) <= shared memory per SM",
               [](const Config& c, const DeviceInfo& d, const Problem&) {
                 const std::size_t per_block = std::size_t(c.get("block")) * 256 + kSpillBytesPerBlock + 1024;
                 return std::size_t(c.get("blocks_per_sm")) * per_block <= smem_limit(d) + 1024;
               });
  return s;
}

// u8: one block of 768 threads per SM, adaptive 1: on an H100 (2026-11-26, test_histogram_perf_gpu,
// CUB in the same run) 1.01x CUB on 1 GiB of runs of 1 to 64 equal bytes (thread_private: 0.87x),
// 1.02x on one repeated byte, 1.03x on uniform bytes; 256-thread blocks, three per SM, took 10%
// longer on 1 GiB (506.9 against 460.0 us with adaptive 0).  f32: 256-thread blocks, three per SM:
// 1.07x CUB on 2^20 floats (768 threads: 0.89x), 0.88x on 2^28 (768 threads: 0.94x).
Config spill_default(const DeviceInfo&, bool range) {
  if (range) return {{"block", 256}, {"blocks_per_sm", 3}};
  return {{"block", 768}, {"blocks_per_sm", 1}, {"adaptive", 1}};
}

ParamSpace warp_private_space(bool range) {
  ParamSpace s;
  s.param("warps", {2, 4, 8, 16, 32})
      .param("copies", {1, 2, 4, 8, 16, 32})
      .param("by_lane", {0, 1})
      .param("blocks_per_sm", {1, 2, 4, 8, 16})
      .param("vector", range ? std::vector<int>{1, 4} : std::vector<int>{1, 16});
  s.constraint("warps * 32 * blocks_per_sm <= 2048 resident threads",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 return resident(c.get("warps") * 32, c.get("blocks_per_sm"));
               });
  s.constraint("by_lane = 0 needs copies <= warps",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 return c.get("by_lane") == 1 || c.get("copies") <= c.get("warps");
               });
  s.constraint("copies * bins * 4 bytes <= shared memory per block",
               [range](const Config& c, const DeviceInfo& d, const Problem& p) {
                 return std::size_t(c.get("copies")) * std::size_t(bins_of(p, range)) * 4 <= smem_limit(d);
               });
  return s;
}

// Not yet measured on an H200.  Bytes: one counter column per lane (32 copies interleaved, 32 KiB,
// conflict-free atomics), 16-byte loads, 2048 threads per SM.  Floats: two per-warp copies so that
// up to ~29k bins fit in shared memory.
Config warp_private_default(const DeviceInfo&, bool range) {
  if (range) return {{"warps", 16}, {"copies", 2}, {"by_lane", 0}, {"blocks_per_sm", 4}, {"vector", 4}};
  return {{"warps", 16}, {"copies", 32}, {"by_lane", 1}, {"blocks_per_sm", 4}, {"vector", 16}};
}

}  // namespace kiln::histogram
