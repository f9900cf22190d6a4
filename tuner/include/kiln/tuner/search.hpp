// run_search: one problem's search from start to choice — the strategy evaluates candidates
// (each validated before it is timed), the fastest few (and their variants' defaults within
// reach) are re-timed interleaved, and the winner is the fastest compared within pairs of rounds
// unless another finalist is within the measured noise of it, in which case the fixed tie rule
// (preferred_finalist: priority, the variant's default, preferred_on_tie) decides; retime.hpp
// says why and how.  The same machine thus gives the same choice.
//
//   kiln::SearchOptions o;  o.strategy = "anneal";  o.budget.evals = 40;
//   kiln::SearchResult r = kiln::run_search(evaluator, space.candidates, o);
//   if (r.winner) std::cout << r.winner->candidate.to_string();
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kiln/tuner/candidate.hpp"
#include "kiln/tuner/evaluator.hpp"
#include "kiln/tuner/retime.hpp"  // the finalists' re-timing and choice under clock drift
#include "kiln/tuner/strategy.hpp"

namespace kiln {

struct SearchResult {
  std::string strategy;
  std::size_t space_size = 0;
  std::vector<CandidateResult> results;    // every evaluated candidate, in evaluation order
  std::vector<CandidateResult> finalists;  // after re-timing, winner first, then by median
  std::optional<CandidateResult> winner;   // never a candidate that is not ok
  std::string choice_note;                 // how the winner was picked (tie rule, single finalist)
  std::string stop_reason;                 // "all candidates evaluated", "budget of 40 evaluations", ...
  bool cancelled = false;
  bool device_lost = false;
  double seconds = 0.0;                    // search and re-timing
  std::size_t evaluations() const { return results.size(); }
};

SearchResult run_search(Evaluator& evaluator, const std::vector<Candidate>& candidates, const SearchOptions& options);

// The choice from pooled medians (run_search's fallback with fewer than 2 pairs of rounds, see
// choose_winner_paired; exposed for tests): index of the winner in
// `timed` (all ok, each with its re-timed samples) and a note saying how it was chosen.
std::size_t choose_winner(const std::vector<CandidateResult>& timed, double tie_fraction, std::string* note);

}  // namespace kiln
