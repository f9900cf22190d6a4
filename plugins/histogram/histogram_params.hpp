// Tuning spaces and defaults of the CUDA histogram variants (both ops).  Every parameter is a
// launch argument of the kernels except warp_private's `vector` and thread_private's `block` and
// `ilp`, template arguments whose every value is instantiated, so the spaces need no `only(...)`
// list.
//
//   kiln::ParamSpace s = kiln::histogram::warp_private_space(/*range=*/false);
//   s.to_string();   // "warps in {2,4,8,16,32}; copies in {1,...,32}; ..."
#pragma once
#include <cstddef>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>

namespace kiln::histogram {

// Threads one SM keeps resident on sm_70 .. sm_90; used to prune configs that could not all be
// resident at once (they would still run correctly).
inline constexpr int kThreadsPerSm = 2048;

// Shared memory a block may use on `device` (the opt-in limit; 48 KiB when unknown).
std::size_t smem_limit(const DeviceInfo& device);
// Bins of a problem of either op: 256 for histogram, dims[1] for histogram_range.
int bins_of(const Problem& p, bool range);

// histogram[_range]_global_atomic: block, blocks_per_sm.
ParamSpace global_atomic_space();
Config global_atomic_default(const DeviceInfo& device);

// histogram[_range]_smem: block, blocks_per_sm.
ParamSpace smem_space();
Config smem_default(const DeviceInfo& device);

// histogram[_range]_thread_private: block (256, 512 or 768 threads; 256 bytes of shared memory
// each, plus 1 KiB per block with adaptive 2), blocks_per_sm, ilp (counter reads in flight per
// thread: 0 = none, each counter bumped by a shared atomicAdd to its word; 1 or 2 = read, add,
// write; f32: 0 or 1) and for u8 adaptive (0: the private counters only; 1: a batch of loads
// that are all 16 equal bytes in every lane of a warp is one +16 per load; 2: also shared atomics
// into the block's histogram for batches whose sampled bytes take few values).  block, ilp and
// adaptive are template arguments: 24 u8 triples (ilp 0 with adaptive 0 or 1) and six f32 pairs
// are instantiated.  The tuner draws uniform bytes, so the
// default of adaptive comes from the other data kinds' timings in the README, not from tuning.
// histogram_range needs bins <= kMaxThreadPrivateBins.
inline constexpr int kMaxThreadPrivateBins = 256;
inline constexpr int kDefaultAdaptive = 1;  // see thread_private_default
inline constexpr int kDefaultIlp = 0;       // u8; see thread_private_default
// adaptive >= 1: a batch takes the runs path when no lane's first load holds more runs of equal
// bytes than this (config key `runs_max`, a launch argument outside the tuned space).  1: only
// loads of 16 equal bytes; more lost on an H100 (2026-11-26, sixth session, 1 GiB: runs_max 8 took
// skewed bytes from 452 to 677 us, runs of 1 to 64 from 454 to 484; runs_max 4 the runs to 483).
inline constexpr int kDefaultRunsMax = 1;
// adaptive 2: a batch takes the block's shared atomics when the first bytes of the warp's 32
// lanes take at most this many values (config key `few_bins`, a launch argument outside the
// tuned space, as runs_max).
inline constexpr int kDefaultFewBins = 8;
// The generic thread_private kernel (u8 adaptive 1 and 2, f32): 1 flushes the counters with one
// atomicExch(word, 0) per word, 0 with 16-byte loads and stores (config key `exchange`, a launch
// argument outside the tuned space, as runs_max).  1: on an H200 (2026-11-26, eighth session,
// test_histogram_perf_gpu, CUB in the same run) u8 256x3 ilp 0 adaptive 1 took 1 GiB of uniform
// bytes from 327.3 to 299.1 us (1.51x to 1.65x CUB), skewed from 322.7 to 291.7 (0.95x to 1.05x),
// 64 KiB to 64 MiB unchanged or faster; f32 2^28 floats, 256 bins, from 282.2 to 276.7 us.
inline constexpr int kDefaultExchange = 1;
// Shared memory of a block: 256 8-bit counters per thread, plus (u8, adaptive 2) one 1 KiB 32-bit
// histogram for the block's shared atomics (until 2026-11-26, eighth session: one per warp,
// 32 bytes per thread).
constexpr std::size_t thread_private_smem_bytes(bool range, int adaptive, int block) {
  return std::size_t(block) * 256 + (range || adaptive != 2 ? 0 : 1024);
}
ParamSpace thread_private_space(bool range);
Config thread_private_default(const DeviceInfo& device, bool range);

// histogram[_range]_spill: block (256, 512 or 768 threads; 256 bytes of shared memory each, plus
// 1 KiB of spill counts per block), blocks_per_sm, and for u8 adaptive (0: every byte updates
// its counter; 1: a warp picks per batch between that, one update per run of equal bytes, and
// SIMD counting of a few hot values).  block and adaptive are template arguments, all
// instantiated (6 u8 kernels, 3 f32).  histogram_range needs bins <= kMaxThreadPrivateBins.
inline constexpr std::size_t kSpillBytesPerBlock = 256 * 4;
ParamSpace spill_space(bool range);
Config spill_default(const DeviceInfo& device, bool range);

// histogram[_range]_warp_private: warps (per block), copies (private sub-histograms per block),
// by_lane (0: warp w uses copy w % copies, copies stored one after another; 1: lane l uses copy
// l % copies, copies interleaved bin by bin so that with 32 copies each lane owns one bank),
// blocks_per_sm, vector (elements per load: 16 u8 or 4 f32 = 16 bytes, or 1).
ParamSpace warp_private_space(bool range);
Config warp_private_default(const DeviceInfo& device, bool range);

}  // namespace kiln::histogram
