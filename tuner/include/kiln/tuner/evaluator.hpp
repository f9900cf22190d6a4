// Evaluator: validates and times candidates for one problem.  The tuner, `kiln bench` and
// `kiln verify` talk to this interface only; tests substitute a synthetic evaluator with a known
// cost, so strategies and tie-breaking are testable without a GPU.
//
//   kiln::ProblemEvaluator ev(problem);                // fresh seeded inputs + host reference
//   kiln::CandidateResult r = ev.check({variant, config});   // poison, run once, compare
//   if (r.ok()) r = ev.time({variant, config}, kiln::TimingOptions{});
//
// CUDA faults: a launch that returns an error, or a stream that reports one when synchronised,
// makes the candidate a `fault`.  An error that leaves the context unusable (an illegal address
// is "sticky") also sets device_lost: nothing more can run on that device in this process, and
// callers stop cleanly and say which candidates were not evaluated.
#pragma once
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "kiln/buffer.hpp"
#include "kiln/problem.hpp"
#include "kiln/stream.hpp"
#include "kiln/tuner/candidate.hpp"
#include "kiln/tuner/problem_data.hpp"
#include "kiln/tuner/timer.hpp"

namespace kiln {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Poisons the outputs, runs the candidate once and compares with the host reference.
  // Outcome ok, failed or fault; never throws for a misbehaving candidate.
  virtual CandidateResult check(const Candidate& c) = 0;
  // Times a candidate that passed check(): outcome ok with `timing`, or fault.
  virtual CandidateResult time(const Candidate& c, const TimingOptions& options) = 0;
  // The full check of a candidate whose check() was provisional (waits for the reference).
  virtual CandidateResult confirm(const Candidate& c) { return check(c); }
};

struct EvaluatorOptions {
  std::uint64_t seed = 42;        // input generator seed
  bool pitched = false;           // rank-2 tensors get padded rows (strides differ from widths)
  bool warm = false;              // do not flush the L2 cache between timed runs
  // Bounds the time spent timing one candidate: the number of runs shrinks (down to the
  // options' min_runs) so that runs x (the duration of the check run) stays under this; 0: no
  // cap (Tuner::tune refuses NaN and negative values).
  double max_seconds_per_candidate = 1.0;
  // Compute the host reference on another thread (from a second copy of the same seeded
  // inputs) while candidates are timed.  Until it is ready check() only runs the candidate and
  // catches launch errors and faults (a provisional result); confirm() then compares it.  For
  // large problems whose host reference takes longer than the search (gemm 4096^3) this hides
  // most of the reference's time.  Off for host problems (it would compete with host timing).
  bool background_reference = false;
  // The oracle (see ProblemData::use_oracle): when set, the expected outputs come from this
  // trusted variant run on the problem's device, checked on `oracle_samples` output elements
  // against the schema's reference_element, and the host reference is not computed.  If the
  // oracle fails or disagrees, the evaluator falls back to the host reference and says so.
  // Tuner::tune sets it by choose_oracle() (oracle.hpp) unless use_oracle is false.
  std::optional<Candidate> oracle;
  bool use_oracle = true;
  int oracle_samples = 512;
  // Problems whose host reference is estimated (OpSchema::work at 1 GFLOP/s or 2 GB/s) to take
  // at least this long get an oracle when one is available.
  double oracle_above_seconds = 0.25;
};

// The real evaluator: ProblemData for the inputs and the reference, Variant::launch on a stream
// of its own (with its own workspace), kiln::time_runs for timing (CUDA events on CUDA, a host clock on the host).
class ProblemEvaluator final : public Evaluator {
 public:
  // Allocates and fills the problem's tensors on problem.device (problem.schema must be set) and
  // computes the host reference; throws the kiln::Error raised when the schema cannot describe
  // the problem.
  explicit ProblemEvaluator(const Problem& problem, EvaluatorOptions options = {});
  ~ProblemEvaluator() override;

  CandidateResult check(const Candidate& c) override;
  CandidateResult time(const Candidate& c, const TimingOptions& options) override;
  CandidateResult confirm(const Candidate& c) override;

  const Problem& problem() const { return data_.problem(); }
  double tolerance() const { return data_.tolerance(); }
  // Seconds spent building the inputs (and the host reference, unless it runs in the background).
  double prepare_seconds() const { return prepare_seconds_; }
  // Seconds the expected outputs took (host reference, or oracle run and check); 0 while a
  // background reference is still being computed.
  double reference_seconds() const { return reference_seconds_; }
  // Where the expected outputs come from: "host reference", or "oracle NAME [config] checked on
  // N sampled elements (error E)", with the reason when an oracle was refused.
  const std::string& expected_source() const { return expected_source_; }
  // Waits for a background reference (if any) so reference_seconds() is final.
  void collect_reference() { reference_ready(/*wait=*/true); }
  bool device_lost() const { return device_lost_; }

 private:
  Status launch(ProblemData& data, const Candidate& c);
  CandidateResult validate(ProblemData& data, const Candidate& c, bool compare);
  CandidateResult fault(const Candidate& c, const std::string& what);
  // Whether the expected outputs are ready, waiting for a background reference when `wait`.
  bool reference_ready(bool wait);
  void prepare_expected(const Problem& problem);

  Device device_;
  EvaluatorOptions options_;
  double prepare_seconds_ = 0.0;
  ProblemData data_;  // inputs, candidates' outputs and the expected outputs
  std::future<double> pending_;  // a background host reference: its seconds
  bool reference_done_ = false;
  std::string reference_error_;
  double reference_seconds_ = 0.0;
  std::string expected_source_;
  OwnedStream stream_;
  std::unique_ptr<CacheFlusher> flusher_;
  Buffer workspace_;
  double last_check_us_ = 0.0;
  bool device_lost_ = false;
};

}  // namespace kiln
