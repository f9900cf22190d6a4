#include "bench_rounds.hpp"

#include <algorithm>

#include <kiln/tuner/retime.hpp>

namespace kiln::cli {

std::vector<BenchVisit> bench_visits(std::size_t rows, int runs, int warmup) {
  std::vector<BenchVisit> visits;
  if (rows == 0 || runs <= 0) return visits;
  const int rounds = rows >= 2 && runs >= 4 ? 4 : 1;
  for (int round = 0; round < rounds; ++round) {
    const int n = runs / rounds + (round < runs % rounds ? 1 : 0);
    for (std::size_t row : retime_order(rows, round))
      visits.push_back({row, n, round == 0 ? warmup : std::min(warmup, 1)});
  }
  return visits;
}

}  // namespace kiln::cli
