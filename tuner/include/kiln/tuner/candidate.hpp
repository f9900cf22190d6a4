// Candidate: one (variant, config) pair the tuner may choose, and what happened when it was
// tried.  The fixed order used to break near ties also lives here, so every tool applies it alike.
//
//   kiln::Candidate c{variant, variant->default_config(device)};
//   c.to_string();                              // "gemm_tiled [tile=32]"
//   kiln::CandidateResult r = evaluator.check(c);
//   if (r.ok()) std::cout << r.timing.median_us << " us\n";   // else r.outcome and r.reason say why
#pragma once
#include <string>

#include "kiln/param_space.hpp"
#include "kiln/tuner/timer.hpp"
#include "kiln/variant.hpp"

namespace kiln {

struct Candidate {
  const Variant* variant = nullptr;
  Config config;
  bool is_default = false;  // the variant's default config (tried first by every strategy)
  std::string to_string() const;  // "name [config]", or "name" for an empty config
};

enum class Outcome {
  ok,        // validated (and timed, when timing was asked for)
  rejected,  // excluded before running: device kind, dtype, a constraint or supports()
  failed,    // ran, but the launch returned an error or the result was wrong
  fault,     // the device reported an error (bad launch, illegal address, ...)
};
const char* outcome_name(Outcome outcome);

struct CandidateResult {
  Candidate candidate;
  Outcome outcome = Outcome::ok;
  std::string reason;        // why it is not ok; for an ok one that stopped early, a note
  double error = 0.0;        // relative error vs the host reference (when checked)
  double tolerance = 0.0;
  Timing timing;             // when ok and timed
  bool device_lost = false;  // the fault left the device unusable for this process
  // Ran without faults but not yet compared with the host reference (still being computed, see
  // EvaluatorOptions::background_reference); run_search confirms it before anything is chosen.
  bool provisional = false;
  bool ok() const { return outcome == Outcome::ok; }
};

// The fixed tie rule: true when `a` is preferred over `b` among candidates whose times are
// within the measured noise of each other: higher variant priority, then the smaller config
// string, then the smaller variant name.
bool preferred_on_tie(const Candidate& a, const Candidate& b);

}  // namespace kiln
