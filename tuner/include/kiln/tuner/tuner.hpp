// Tuner: tunes one problem of a Runtime's registry — builds the search space, prepares the
// inputs and host reference, runs the search, and stores the winner in the user layer of the
// tuning database with its statistics and the plugin's name, version and build id.
//
//   kiln::Tuner tuner(rt);
//   const auto& schema = rt.registry().op("gemm");
//   kiln::Problem p = schema.problem_from_shape(kiln::f32, "4096x4096x4096", rt.default_device());
//   kiln::TuneOptions o;  o.search.strategy = "anneal";  o.search.budget.evals = 40;
//   kiln::TuneReport r = tuner.tune(p, o);
//   if (r.stored)                                  // op() on this problem now runs it
//     std::cout << r.entry->variant << " " << r.entry->config.to_string() << "\n";
#pragma once
#include <optional>
#include <string>

#include "kiln/runtime.hpp"
#include "kiln/tuner/evaluator.hpp"
#include "kiln/tuner/search.hpp"
#include "kiln/tuner/search_space.hpp"

namespace kiln {

struct TuneOptions {
  SearchOptions search;
  EvaluatorOptions evaluator;
  SpaceOptions space;
  bool store = true;  // write the winner to the user layer of rt.db()
  // When set, a bound on one problem's tuning as a whole: preparing the inputs and expected
  // outputs counts against it, and the search gets what is left (search.budget.seconds, if
  // smaller, still applies; never less than a tenth of it).  KILN_TUNE=lazy sets it.
  std::optional<double> total_seconds;
};

struct TuneReport {
  Problem problem;
  std::string device_key;        // the device fingerprint entries are stored under
  SearchSpace space;
  SearchResult search;
  double prepare_seconds = 0.0;    // inputs (and the host reference unless in the background)
  double reference_seconds = 0.0;  // the expected outputs: host reference, or oracle run and check
  std::string expected_source;     // "host reference" or "oracle NAME [config] checked on ..."
  std::optional<TuningEntry> entry;  // what was (or would be) stored
  bool stored = false;
  std::string db_path;
  std::string error;             // set when nothing could be tuned (no candidates, bad problem, ...)
  bool ok() const { return entry.has_value(); }
};

class Tuner {
 public:
  explicit Tuner(Runtime& rt) : rt_(&rt) {}

  // Never throws for a misbehaving candidate; throws kiln::Error for a bad problem (unknown
  // op, shape the schema rejects) and TuningDbError when the user file cannot be written.
  TuneReport tune(const Problem& problem, const TuneOptions& options = {});
  // The user layer's entry for `problem` under this device's exact fingerprint when it is
  // current (variant loaded, same build id, config valid, supports the problem): what makes a
  // plan run skip the problem on resume.
  std::optional<TuningEntry> current_entry(const Problem& problem) const;
  // The database entry for a winner (statistics, throughput, plugin identity, timestamp).
  TuningEntry make_entry(const Problem& problem, const CandidateResult& winner) const;

 private:
  Runtime* rt_;
};

// The fastest ok candidate of each variant other than the winner's, fastest first: a finalist's
// re-timed median where it has one, else its search-time median.  What an entry's
// `alternatives` hold (dispatch weighs them for problems with no entry of their own).
std::vector<TunedAlternative> alternatives_of(const SearchResult& search);

// Throughput of one call taking `median_us`: TFLOP/s for flop-counted ops, GB/s for bytes.
double throughput(const OpSchema& schema, const Problem& problem, double median_us);
const char* throughput_unit(const OpSchema& schema);
// Now as ISO 8601 UTC, "2026-11-21T10:00:00Z".
std::string utc_timestamp();

}  // namespace kiln
