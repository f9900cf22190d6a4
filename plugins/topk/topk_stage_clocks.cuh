// Stage clocks of topk_warp_select's row-per-block kernel: a diagnostic compiled in only with
// -DKILN_TOPK_STAGE_CLOCKS (never in a shipped build).  Thread 0 of block 0 adds the clock64()
// cycles between marks to per-stage totals in shared memory and prints them per row when the block
// ends, so a bench of the diagnostic plugin shows where a row's time goes (cycles of one block,
// which shares its SM with the others: they include waiting for the issue slots those take).
//
//   KILN_STAGE_START(sh);      // kernel start
//   KILN_STAGE_MARK(sh, 2);    // the cycles since the last mark go to stage 2
//   KILN_STAGE_ROW(sh);        // one more row done
//   KILN_STAGE_REPORT(sh);     // before the block returns
#pragma once

namespace kiln::topk {

// wait for the row + ranks, bound, search, ties + barrier, filter, sort + write
inline constexpr int kStageClocks = 6;

}  // namespace kiln::topk

#ifdef KILN_TOPK_STAGE_CLOCKS
#include <cstdio>

#define KILN_STAGE_FIELDS      \
  long long stage_total[::kiln::topk::kStageClocks]; \
  long long stage_last;        \
  int stage_rows;
#define KILN_STAGE_OWNER (blockIdx.x == 0 && threadIdx.x == 0)
#define KILN_STAGE_START(sh)                                                        \
  do {                                                                              \
    if (KILN_STAGE_OWNER) {                                                         \
      for (int s_ = 0; s_ < ::kiln::topk::kStageClocks; ++s_) (sh).stage_total[s_] = 0; \
      (sh).stage_rows = 0;                                                          \
      (sh).stage_last = clock64();                                                  \
    }                                                                               \
  } while (0)
#define KILN_STAGE_MARK(sh, i)                  \
  do {                                          \
    if (KILN_STAGE_OWNER) {                     \
      const long long now_ = clock64();         \
      (sh).stage_total[i] += now_ - (sh).stage_last; \
      (sh).stage_last = now_;                   \
    }                                           \
  } while (0)
#define KILN_STAGE_ROW(sh)                 \
  do {                                     \
    if (KILN_STAGE_OWNER) ++(sh).stage_rows; \
  } while (0)
#define KILN_STAGE_REPORT(sh)                                                                              \
  do {                                                                                                     \
    if (KILN_STAGE_OWNER && (sh).stage_rows > 0) {                                                         \
      const double r_ = double((sh).stage_rows);                                                           \
      printf("topk stage clocks (block 0, cycles a row, %d rows): wait+ranks %.0f bound %.0f search %.0f " \
             "ties+barrier %.0f filter %.0f sort+write %.0f\n",                                            \
             (sh).stage_rows, (sh).stage_total[0] / r_, (sh).stage_total[1] / r_, (sh).stage_total[2] / r_,  \
             (sh).stage_total[3] / r_, (sh).stage_total[4] / r_, (sh).stage_total[5] / r_);                 \
    }                                                                                                      \
  } while (0)
#else
#define KILN_STAGE_FIELDS
#define KILN_STAGE_START(sh) \
  do {                       \
  } while (0)
#define KILN_STAGE_MARK(sh, i) \
  do {                         \
  } while (0)
#define KILN_STAGE_ROW(sh) \
  do {                     \
  } while (0)
#define KILN_STAGE_REPORT(sh) \
  do {                        \
  } while (0)
#endif
