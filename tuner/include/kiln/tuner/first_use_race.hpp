// The first-use race (KILN_TUNE=race, the default): on a dispatch miss whose decision rests on
// other problems' evidence (a neighbour, the model, a fallback; never an exact entry), the
// prediction and up to two runners-up (the dispatcher's choice without the predicted variant,
// and without any variant of its plugin), each also at its default for the problem, and for a
// problem that runs in under tiny_us every variant at its default, are timed on this problem, on
// inputs of its own; a runner-up replaces the prediction only when clearly faster.  Why:
// neighbours predict a variant's time from other shapes, and a vendor library has slow spots no
// neighbour shows (docs/performance.md, eleventh session: cuBLAS at 1.8x split k on
// 7680 x 24 x 2560 where every tuned neighbour had them level).  What it costs: the first op()
// call of such a problem blocks for the race (inputs filled on the GPU, the candidates timed;
// bounded by max_seconds), once per process; nothing is written to the database.
//
//   kiln::RaceOptions o;                                    // the defaults op() uses
//   auto d = kiln::race_first_use(rt, problem, kiln::device_info(problem.device), o);
//   if (d) std::cout << d->race_note << "\n";               // "kept X [..] 53.9 us, ahead of Y [..] 97.4 us"
#pragma once
#include <cstdint>
#include <limits>
#include <optional>

#include "kiln/dispatcher.hpp"
#include "kiln/runtime.hpp"

namespace kiln {

struct RaceOptions {
  // The runner-up of the predicted variant's own plugin is raced only when the weighed neighbours
  // expect it within this factor of the prediction (decisions without such an expectation always
  // race); the runner-up from another plugin always races.  Unbounded by default: a race costs a
  // few ms, and a blind draw (twelfth session) had topk_warp_select at 11.5 us where the
  // neighbours expected it far behind the predicted 28.4 us sample select.
  double reach = std::numeric_limits<double>::infinity();
  // A runner-up replaces the prediction only when its median is at least this fraction faster:
  // on a near tie the neighbours' re-timed evidence stands.  Measured on the H200 (twelfth
  // session): a race of 4 x 5 runs put gemm_wgmma 5 % ahead of cuBLASLt on two bf16 GEMMs of
  // 3.7-4 ms where kiln bench --regret, in the same process, had it 10 % behind (clocks under a
  // sustained tensor-core load); the slow spots the race is for are 20-80 % apart.
  double margin = 0.08;
  // A problem whose prediction runs below this (one probe of 3 runs) races every variant at its
  // default as well: below it a sweep of every default costs a few tens of ms (10 variants x 4
  // rounds x 6 runs of at most this, L2 flushes included), and there launch overhead and the
  // short-row paths decide, which neighbours of other shapes do not predict.  0: never.  20 us in
  // the device runs of the twelfth session; 100 from replaying their bench timings offline (two
  // few-row top-k problems at 28 us ran sample select 2.6-3.1x slower than warp select, which no
  // rule raced; docs/performance.md).
  double tiny_us = 100.0;
  // Problems whose tensors take more bytes than this are not raced (the race allocates its own).
  std::int64_t max_tensor_bytes = std::int64_t{1} << 30;
  // Wall-clock bound on the timing (inputs excluded), shared by the candidates and rounds.
  double max_seconds = 0.5;
  int rounds = 4;        // interleaved rounds (prediction, runners-up, then the reverse order)
  int runs = 5;          // timed runs per candidate and round, after one warm-up
  bool allow_host = false;  // tests: race host problems too (op() races CUDA problems only)
};

// The decision to memoise for p (Decision::raced set, race_note filled), or nothing when p is not
// raced (exact entry, no runner-up, too large, a host problem) or the race could not run (every
// failure is logged at debug level and leaves the prediction in place).
std::optional<Decision> race_first_use(Runtime& rt, const Problem& p, const DeviceInfo& device,
                                       const RaceOptions& options = {});
// The same, from the dispatcher's prediction for p (what its miss handler is given), so the race
// does not decide p again.
std::optional<Decision> race_first_use(Runtime& rt, const Problem& p, const DeviceInfo& device,
                                       const Decision& predicted, const RaceOptions& options = {});

}  // namespace kiln
