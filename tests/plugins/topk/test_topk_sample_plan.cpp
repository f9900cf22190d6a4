// topk_sample_select's plan (host only): the whole row is the sample up to kSampleMax, with the
// threshold rank k and room for every element; above it one element in 32 (within kSampleMin and
// kSampleMax, or kSampleMaxLong for rows of kSampleLongRow and more) is sampled, the threshold rank grows with k p, the
// candidate buffer holds 8x the expected candidates and never less than the fallback's selection.
#include <algorithm>
#include <cstdint>

#include "catch.hpp"
#include "topk_params.hpp"
#include "topk_sample_select_params.hpp"

using kiln::topk::sample_plan;

TEST_CASE("topk_sample_select samples whole short rows and can always answer them", "[topk]") {
  for (std::int64_t n : {1, 7, 4097, 8192}) {
    const auto p = sample_plan(n, 1);
    CHECK(p.samples == n);
    CHECK(p.rank == 1);
    CHECK(p.cand_cap >= n);
  }
  const auto p = sample_plan(8191, 4096);
  CHECK(p.rank == 4096);
  CHECK(p.cand_cap == 8191);
  CHECK(p.fallback_cap == 4096);
}

TEST_CASE("topk_sample_select's threshold rank and candidate buffer on long rows", "[topk]") {
  // n = 2^26, k = 100 (a long row: up to kSampleMaxLong samples): k p = 100 / 2048, so rank =
  // ceil(0.0488 + 4 * 0.221) + 3 = 4; about 4 * 2048 = 8192 candidates expected; 8x that is 65536.
  const auto a = sample_plan(std::int64_t(1) << 26, 100);
  CHECK(a.samples == kiln::topk::kSampleMaxLong);
  CHECK(a.rank == 4);
  CHECK(a.cand_cap == 65536);
  CHECK(a.fallback_cap == 2048);
  // n = 2^28, k = 1000: k p = 1000 / 8192, rank = ceil(0.122 + 4 * 0.349) + 3 = 5; 5 * 8192 =
  // 40960 expected, 8x rounded up to 524288.
  const auto e = sample_plan(std::int64_t(1) << 28, 1000);
  CHECK(e.samples == kiln::topk::kSampleMaxLong);
  CHECK(e.rank == 5);
  CHECK(e.cand_cap == 524288);
  // The larger sample starts at kSampleLongRow; below it the sample stops at kSampleMax.
  CHECK(sample_plan(kiln::topk::kSampleLongRow - 1, 1).samples == kiln::topk::kSampleMax);
  CHECK(sample_plan(kiln::topk::kSampleLongRow, 1).samples == kiln::topk::kSampleMaxLong);
  // n = 2^20, k = 4096: k p = 32, rank = ceil(32 + 22.6) + 3 = 58; 58 * 128 = 7424 expected,
  // 8x rounded up to 65536.
  const auto b = sample_plan(std::int64_t(1) << 20, 4096);
  CHECK(b.rank == 58);
  CHECK(b.cand_cap == 65536);
  CHECK(b.fallback_cap == 4096);
  // Just above kSampleMax: one element in 32 sampled, at least kSampleMin; with k close to n the
  // buffer is capped by n (it cannot overflow).
  const auto c = sample_plan(8193, 4096);
  CHECK(c.samples == kiln::topk::kSampleMin);
  CHECK(c.rank <= c.samples);
  CHECK(c.cand_cap == 8193);
  // One in 32 between: 32768 x 32 = 2^20 elements give 8192 samples, 65536 give 2048.
  CHECK(sample_plan(std::int64_t(1) << 20, 1).samples == 8192);
  CHECK(sample_plan(65536, 1).samples == 2048);
  CHECK(sample_plan(65543, 1).samples % kiln::topk::kSampleRun == 0);
  // The buffer never drops below the fallback's selection (it is reused as that).
  for (std::int64_t k : {1, 64, 2048, 4096}) {
    const auto d = sample_plan(1000003, k);
    CHECK(d.cand_cap >= d.fallback_cap);
    CHECK(d.fallback_cap == kiln::topk::radix_cap(2048, k));
  }
  // 16-bit elements: the buffer also holds n / kSampleHalfTieShare keys (the threshold value's tie
  // class).  2^24, k = 100: rank 5, 5 * 512 = 2560 expected, 8x rounded up to 32768 for f32; a
  // uniform bf16 row has 32768 elements at its best value alone, so 16-bit rows hold 2^24 / 256.
  const auto f = sample_plan(std::int64_t(1) << 24, 100);
  const auto h = sample_plan(std::int64_t(1) << 24, 100, 2);
  CHECK(h.samples == f.samples);
  CHECK(h.rank == f.rank);
  CHECK(f.cand_cap == 32768);
  CHECK(h.cand_cap == std::max<std::int64_t>(f.cand_cap, (std::int64_t(1) << 24) / kiln::topk::kSampleHalfTieShare));
  CHECK(h.cand_cap == 65536);
  // Short rows are their own sample either way.
  CHECK(sample_plan(5000, 10, 2).cand_cap == sample_plan(5000, 10).cand_cap);
}
