// The order in which `kiln bench` times its rows.  A GPU running long kernels back to back heats
// up and lowers its clock, so rows timed one after another favour the first (at bf16 8192^3 on an
// H200 that decided a few per cent, enough to flip the op()-against-cuBLASLt ratio).  Instead each
// row's runs are split over 4 rounds, the rounds in pairs forward then backward (retime_order,
// the tuner's finalist order), so every row sees the same clock on average.
//
//   for (const kiln::cli::BenchVisit& v : kiln::cli::bench_visits(3, 20, 3))
//     std::cout << v.row << ":" << v.runs << " ";   // 0:5 1:5 2:5  2:5 1:5 0:5  1:5 2:5 0:5  0:5 2:5 1:5
#pragma once
#include <cstddef>
#include <vector>

namespace kiln::cli {

struct BenchVisit {
  std::size_t row = 0;  // index into the rows being timed
  int runs = 0;         // timed runs in this visit
  int warmup = 0;       // warm-up runs before them
};

// `runs` timed runs for each of `rows` rows: 4 rounds of runs / 4 (the first runs % 4 rounds one
// more) when there are at least 2 rows and 4 runs, else one round; a row's first visit has
// `warmup` warm-ups, its later ones min(warmup, 1) (the kernel is loaded, its inputs flushed
// from L2 before every timed run anyway).
std::vector<BenchVisit> bench_visits(std::size_t rows, int runs, int warmup);

}  // namespace kiln::cli
