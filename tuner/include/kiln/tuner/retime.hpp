// Re-timing the finalists so that the clock's drift does not decide the choice.  A GPU running a
// long kernel back to back heats up and lowers its clock (on an H200 at bf16 8192^3 the order of
// timing moved the results by several per cent, docs/performance.md), so whoever is timed first
// looks faster.  run_search therefore
//   - re-times the finalists in pairs of rounds, forward then backward (retime_order), so that
//     over every pair each finalist's mean position is the same;
//   - compares finalists within each pair of rounds (choose_winner_paired): there they ran close
//     together, forward and backward, so the ratio of their medians cancels the drift, and the
//     spread of those ratios over the pairs is the noise a difference must exceed;
//   - re-times each finalist variant's default config too when the search timed it within reach
//     (default_finalists), and prefers it on a tie: cuBLASLt's `algo=0` (its heuristic's first
//     choice) stays unless another algo beats it by more than the measured noise.
//
//   const std::size_t k = 3;                                           // finalists
//   for (int r = 0; r < kiln::balanced_retime_rounds(5); ++r)          // 6 rounds
//     for (std::size_t f : kiln::retime_order(k, r)) std::cout << f;   // 012 210 120 021 201 102
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kiln/tuner/candidate.hpp"

namespace kiln {

// The rounds run for `requested`: rounded up to an even number, at least 2.
int balanced_retime_rounds(int requested);

// The finalists (0 .. k-1) in the order round `round` times them: rounds come in pairs; the first
// of pair p starts at finalist p % k and goes forward (p, p+1, ..., wrapping), the second visits
// the same order backward.  Over a pair every finalist's two positions sum to k - 1.
std::vector<std::size_t> retime_order(std::size_t k, int round);

// The tie rule among finalists: higher variant priority; then, within one variant, its default
// config; then preferred_on_tie (the smaller config string, the smaller variant name).
bool preferred_finalist(const Candidate& a, const Candidate& b);

// Indices into `ranked` (ok candidates, fastest first) of the finalists: the first `k`, then, for
// each variant among those, its default config when it is further down and its median is at most
// `reach` times the fastest one (a default the search's drift may have pushed out).
std::vector<std::size_t> default_finalists(const std::vector<CandidateResult>& ranked, std::size_t k, double reach);

// The winner among `timed` (ok finalists, each with its pooled re-timed samples) from
// `round_samples[f][r]`, finalist f's samples in round r (every finalist timed in every round,
// the rounds in retime_order's pairs).  Per pair of rounds, finalist f's speed relative to g is
// the mean of its two round medians divided by g's in the same round (a drift linear over the
// pair cancels).  The fastest has the lowest median of those values against finalist 0.  A
// finalist whose median value against the fastest, minus 1, is within the noise is tied with it,
// and preferred_finalist picks among the tied; the noise is 3 standard errors, the larger of
// (a) the two finalists' sample noise (their samples' MAD around their own round's median, so
// drift between rounds is not counted) and (b) the spread of the pair values, and at least
// tie_fraction.  Fewer than 2 pairs of rounds: the pooled medians decide (choose_winner).
// `note` says how the winner was picked.
using RoundSamples = std::vector<std::vector<std::vector<double>>>;  // [finalist][round][sample]
std::size_t choose_winner_paired(const std::vector<CandidateResult>& timed, const RoundSamples& round_samples,
                                 double tie_fraction, std::string* note);

}  // namespace kiln
