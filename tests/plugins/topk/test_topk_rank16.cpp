// topk_grid_radix16's host pieces: rank16_pair (two 16-bit ranks at once) against rank_key for
// every 16-bit pattern in either half, both formats and both orders; the grid plan, the support
// rule and the workspace layout.  And rank16_reach (topk_sample_select's pre-test of a threshold
// on pairs): never skips an element that reaches the threshold.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "catch.hpp"
#include "topk_grid_radix16_params.hpp"
#include "topk_key.hpp"
#include "topk_rank16.hpp"

using kiln::topk::KeyFormat;
using kiln::topk::rank16_pair;
using kiln::topk::rank_key;

TEST_CASE("rank16_pair gives both halves' ranks of rank_key for every 16-bit pattern", "[topk]") {
  std::mt19937 rng(16);
  for (KeyFormat f : {KeyFormat::f16, KeyFormat::bf16})
    for (bool largest : {true, false}) {
      // Partners: the specials of both formats (NaNs, infinities, zeros) and random patterns.
      const std::uint32_t partners[] = {0x0000u, 0x8000u, 0x7C00u, 0xFC00u, 0x7F80u, 0xFF80u, 0x7FFFu, 0xFFFFu,
                                        0x7C01u, 0x7F81u, 0x0001u, 0x8001u, std::uint32_t(rng() & 0xFFFFu), std::uint32_t(rng() & 0xFFFFu)};
      std::int64_t bad = 0;
      for (std::uint32_t h = 0; h < 0x10000u; ++h)
        for (std::uint32_t o : partners) {
          const std::uint32_t lo = rank16_pair(h | (o << 16), f, largest);
          const std::uint32_t hi = rank16_pair(o | (h << 16), f, largest);
          bad += (lo & 0xFFFFu) != rank_key(h, largest, f) >> 16;
          bad += (lo >> 16) != rank_key(o, largest, f) >> 16;
          bad += (hi >> 16) != rank_key(h, largest, f) >> 16;
          bad += (hi & 0xFFFFu) != rank_key(o, largest, f) >> 16;
        }
      CAPTURE(int(f), largest);
      CHECK(bad == 0);
    }
}

TEST_CASE("rank16_reach passes every element whose rank reaches the threshold, and few others", "[topk]") {
  using kiln::topk::rank16_reach;
  using kiln::topk::rank16_reach_of;
  // Thresholds: every 97th top half, the edges of the usable range and of infinity / NaN for
  // both formats, each with low halves 0, 0xFFFF and one between.
  std::vector<std::uint32_t> tops;
  for (std::uint32_t top = 0; top < 0x10000u; top += 97) tops.push_back(top);
  for (std::uint32_t top : {0x7FFFu, 0x8000u, 0x8001u, 0xFBFFu, 0xFC00u, 0xFC01u, 0xFC02u, 0xFF7Fu, 0xFF80u, 0xFF81u,
                            0xFF82u, 0xFFFEu, 0xFFFFu})
    tops.push_back(top);
  for (KeyFormat f : {KeyFormat::f16, KeyFormat::bf16})
    for (bool largest : {true, false}) {
      std::int64_t missed = 0, wrong_rule = 0, usable = 0;
      for (std::uint32_t top : tops)
        for (std::uint32_t low : {0x0000u, 0x1234u, 0xFFFFu}) {
          const std::uint32_t threshold = top << 16 | low;
          const auto r = rank16_reach_of(threshold, f);
          if (!r.usable) {
            wrong_rule += top >= 0x8000u;  // usable exactly for the best half of the order
            continue;
          }
          ++usable;
          const std::uint32_t inf = f == KeyFormat::f16 ? 0x7C00u : 0x7F80u;
          const std::uint32_t floor = std::min(top - 0x8000u, inf + 1u);
          for (std::uint32_t h = 0; h < 0x10000u; ++h) {
            // h in either half of the word, beside a partner that never passes (magnitude 0 < floor
            // unless floor is 0, when everything passes).
            const std::uint32_t lo = rank16_reach(h, r) & 0x8000u, hi = rank16_reach(h << 16, r) & 0x80000000u;
            const bool passes = lo != 0;
            missed += rank_key(h, largest, f) >= threshold && !passes;
            wrong_rule += passes != ((h & 0x7FFFu) >= floor);  // the documented rule, exactly
            wrong_rule += (hi != 0) != passes;
          }
        }
      CAPTURE(int(f), largest);
      CHECK(usable > 1000);
      CHECK(missed == 0);
      CHECK(wrong_rule == 0);
    }
}

TEST_CASE("topk_grid_radix16's grid covers the row within the resident grid", "[topk]") {
  using kiln::topk::radix16_plan;
  for (std::int64_t rows : {std::int64_t(1), std::int64_t(3), std::int64_t(64), std::int64_t(264)})
    for (std::int64_t n : {std::int64_t(1), std::int64_t(9), std::int64_t(8193), std::int64_t(1000003),
                           std::int64_t(1) << 24, std::int64_t(1) << 30})
      for (int block : {256, 512})
        for (int min_vecs : {1, 2, 4}) {
          const auto g = radix16_plan(rows, n, block, min_vecs, 264);
          CAPTURE(rows, n, block, min_vecs);
          REQUIRE(g.blocks_per_row >= 1);
          CHECK(g.blocks_per_row * rows <= 264);
          CHECK(std::int64_t(g.blocks_per_row) * block * g.vecs_per_thread * 8 >= n + 7);
          CHECK(g.blocks_per_row <= kiln::topk::radix16_layout(rows, n, 100, block, min_vecs).max_blocks_per_row);
        }
  CHECK(radix16_plan(265, 1000, 512, 1, 264).blocks_per_row == 0);
  // 2^22 elements, 512 threads, at least 2 runs each: 513 blocks wanted, 264 resident, 4 runs a thread.
  const auto g = radix16_plan(1, std::int64_t(1) << 22, 512, 2, 264);
  CHECK(g.blocks_per_row == 264);
  CHECK(g.vecs_per_thread == 4);
}

TEST_CASE("topk_grid_radix16 declines what it cannot take, with a reason", "[topk]") {
  kiln::DeviceInfo d;
  d.sm_count = 132;
  using kiln::topk::grid_radix16_supports;
  CHECK(grid_radix16_supports(kiln::bf16, 1, 1 << 20, 100, d).ok);
  CHECK(grid_radix16_supports(kiln::f16, 264, 1000, 4096, d).ok);
  CHECK(grid_radix16_supports(kiln::f16, 1, std::int64_t(1) << 30, 1, d).ok);
  for (const kiln::Support& s :
       {grid_radix16_supports(kiln::f32, 1, 1 << 20, 100, d), grid_radix16_supports(kiln::bf16, 1, 1 << 20, 4097, d),
        grid_radix16_supports(kiln::bf16, 265, 1000, 8, d),
        grid_radix16_supports(kiln::bf16, 1, (std::int64_t(1) << 30) + 1, 8, d)}) {
    CHECK_FALSE(s.ok);
    CHECK_FALSE(s.reason.empty());
  }
  const auto l = kiln::topk::radix16_layout(3, 100000, 700, 512, 1);
  CHECK(l.cands_bytes == 3u * 700u * 8u);
  CHECK(l.header_bytes == 3u * kiln::topk::kRadix16HeaderWords * 4u);
  CHECK(l.block_bins_bytes == 3u * std::size_t(l.max_blocks_per_row) * kiln::topk::kRadix16Bins * 4u);
  CHECK(l.total() == l.cands_bytes + l.header_bytes + l.block_bins_bytes);
}
