// Parameters and plan of topk_sample_select (the variant for long rows; kernels in
// topk_sample_select.cuh).  The threshold is taken from a sample of the row, one pass over the
// row keeps every element at or above it, and the selection runs on those candidates only.
//
//   kiln::topk::SamplePlan p = kiln::topk::sample_plan(/*n=*/1 << 26, /*k=*/100);
//   // p.samples == 32768 elements (4096 runs of 8), p.rank == 4: the threshold is at most the 4th
//   // best sample, so about 4 * n / 32768 = 8192 candidates are expected; p.cand_cap == 65536 holds 8x that.
#pragma once
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/variant.hpp>

#include "topk_params.hpp"

namespace kiln::topk {

// Filter tiles (template arguments of the filter kernel; block x items_per_thread elements per
// step).  The sample, select and fallback kernels have fixed shapes.
inline constexpr TileShape kSampleFilterTiles[] = {{256, 16}, {512, 8}, {512, 16}, {1024, 8}};
inline constexpr int kSampleMax = 8192;         // rows up to this long are their own sample
inline constexpr int kSampleMaxLong = 32768;    // the largest sample (128 KiB of ranks in dynamic shared memory)
inline constexpr std::int64_t kSampleLongRow = std::int64_t(1) << 21;  // rows from here on may sample up to kSampleMaxLong
inline constexpr int kSampleRun = 8;            // contiguous elements per sample run (one 32-byte sector of f32)
inline constexpr int kSampleMin = 1024;         // the smallest sample of a row longer than kSampleMax
inline constexpr int kSampleDensity = 32;       // otherwise n / 32 elements (one in 32), up to kSampleMax
inline constexpr int kSampleBlock = 256;        // threads of the sample kernel for samples of up to kSampleMax
inline constexpr int kSampleBlockLong = 1024;   // and above (few long rows: more loads in flight per row)
// Up to this many rows that are sampled (samples < n), the sample is gathered by a grid of its own
// (sample_gather_kernel, kSampleGatherBlock threads a block) before the threshold kernel: with
// few rows the one block per row that reads the sample is latency-bound.  H200, 2026-11-28, same
// call, with / without: 1 x 2^24 f32 k = 1024 68.8 / 80.8 us, 8 x 2^22 f32 k = 64 81.6 / 92.5,
// 16 x 2097157 bf16 k = 128 92.8 / 101.7, 64 x 2^20 f32 k = 64 121.3 / 120.3 (MAD 0.6): the
// gain is gone by 64 rows, so the bound sits between 16 and 64.
inline constexpr int kSampleGatherMaxRows = 32;
inline constexpr int kSampleGatherBlock = 256;
// A sampled threshold's tie class of at least this many samples is passed by the filter only up to
// an index bound (sample_tie_bound in topk_sample_select.cuh).
inline constexpr int kSampleTieMin = 16;
inline constexpr int kSampleStage = 2048;       // candidate keys a filter block stages in shared memory (16 KiB)
inline constexpr int kSampleSelectItems = 8;    // candidate keys per thread in flight in the select kernel
// Threads of the select kernel: few rows have many candidates each (1024 threads pull them from
// L2 faster), many rows few (256 threads keep more rows resident per SM).
inline constexpr int kSampleSelectWideBlock = 1024;
inline constexpr int kSampleSelectBlock = 256;
inline constexpr int kSampleSelectWideRows = 128;  // up to this many rows use the wide block
inline constexpr int kSampleSortCap = 4096;     // keys sorted in shared memory by the select kernel
inline constexpr int kSampleSortMin = 256;      // it refines digits until at most max(this, 2 pow2(k)) keys are left
// The select kernel places lists of more than kSampleBucketSortMin keys by buckets of one 8-bit
// digit (a key's place: its bucket's start plus the larger keys of its bucket), unless a bucket
// holds more than kSampleBucketMax keys (then a bitonic sort).
inline constexpr int kSampleBucketSortMin = 64;
inline constexpr std::uint32_t kSampleBucketMax = 64;
inline constexpr TileShape kSampleFallbackTile = {512, 8};  // the radix_select passes of rows whose filter failed
inline constexpr int kSampleFallbackGrid = 512;             // blocks of each fallback launch (they loop over chunks)

// What one launch does with a row of n, given k (the same for every row).
struct SamplePlan {
  int samples = 0;            // ranks sampled per row: n when n <= kSampleMax, else n / 32
                              // (a multiple of kSampleRun) within [kSampleMin, kSampleMax], or
                              // [kSampleMin, kSampleMaxLong] for rows of kSampleLongRow and more
  int rank = 0;               // the threshold is at or below the rank-th best sample
  std::int64_t cand_cap = 0;  // candidate keys kept per row (at least n when samples == n, and at
                              // least the fallback's sort capacity, whose buffer it shares)
  int fallback_cap = 0;       // topk_radix_select's capacity for rows whose filter fails
};

// Sampling fraction p = samples / n.  The number of the k best elements that fall in the sample
// is about Binomial(k, p); the threshold rank r = ceil(kp + 4 sqrt(kp)) + 3 sits more than four
// of its standard deviations above the mean, so that fewer than k candidates (a fallback) is rare
// (below 1e-6 for k p <= 1).  The candidates then number about r / p with a relative spread of
// 1 / sqrt(r); the buffer holds 8 r / p (as a power of two), so that it overflows (a fallback) about
// as rarely.  With samples == n the rank is k and nothing can overflow: every row succeeds.
// 16-bit elements (element_bytes 2) have at most 65536 distinct values, so every element equal to
// the threshold's value is a candidate: the buffer also holds n / kSampleHalfTieShare keys
// (uniform bf16 in [-1, 1): the best value alone holds n / 512 elements, 32768 of a row of 2^24,
// which overflowed the 32768 keys planned for k = 100 about half the time).
SamplePlan sample_plan(std::int64_t n, std::int64_t k, int element_bytes = 4);
inline constexpr int kSampleHalfTieShare = 256;

// block, items_per_thread (an instantiated pair of kSampleFilterTiles), blocks (target blocks of
// the filter grid, and of the fallback passes).
ParamSpace sample_select_space();
Config sample_select_default(const DeviceInfo& device);

}  // namespace kiln::topk
