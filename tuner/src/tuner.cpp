#include "kiln/tuner/tuner.hpp"

#include "kiln/tuner/oracle.hpp"
#include "kiln/tuner/problem_data.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "kiln/errors.hpp"
#include "logger.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln {

double throughput(const OpSchema& schema, const Problem& problem, double median_us) {
  if (!schema.work || median_us <= 0.0) return 0.0;
  const double per_second = schema.work(problem) / (median_us * 1e-6);
  return schema.work_unit == WorkUnit::flop ? per_second / 1e12 : per_second / 1e9;
}

const char* throughput_unit(const OpSchema& schema) { return schema.work_unit == WorkUnit::flop ? "TFLOP/s" : "GB/s"; }

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TuningEntry Tuner::make_entry(const Problem& problem, const CandidateResult& winner) const {
  TuningEntry e;
  e.variant = winner.candidate.variant->name();
  e.config = winner.candidate.config;
  e.median_us = winner.timing.median_us;
  e.mad_us = winner.timing.mad_us;
  e.samples = winner.timing.samples;
  e.throughput = throughput(*problem.schema, problem, winner.timing.median_us);
  e.throughput_unit = throughput_unit(*problem.schema);
  const Source& src = rt_->registry().source_of(*winner.candidate.variant);
  e.plugin_name = src.plugin;
  e.plugin_version = src.version;
  e.plugin_build = src.build_id;
  e.tuned_at = utc_timestamp();
  return e;
}

std::vector<TunedAlternative> alternatives_of(const SearchResult& search) {
  if (!search.winner) return {};
  const std::string& winner = search.winner->candidate.variant->name();
  // Per variant the fastest ok candidate; a finalist's re-timed median counts over its search-time one
  // (finalists are timed interleaved with the winner, so their ratio to it is the trustworthy one).
  // Finalists are offered first, so a variant that has one keeps its fastest finalist.
  // The others' search-time medians are scaled by the winner's re-timed over its search-time
  // median: the search and the re-timing ran at different moments (clocks, temperature), so only
  // times of one phase compare (on the H100 a large bf16 GEMM's unscaled search time read 10%
  // below the re-timed winner that had beaten it).
  double search_to_final = 1.0;
  for (const CandidateResult& r : search.results)
    if (r.ok() && !r.provisional && r.timing.median_us > 0 && r.candidate.variant == search.winner->candidate.variant &&
        r.candidate.config == search.winner->candidate.config && search.winner->timing.median_us > 0) {
      search_to_final = search.winner->timing.median_us / r.timing.median_us;
      break;
    }
  std::map<std::string, std::pair<TunedAlternative, bool>> best;  // variant -> (fastest, from a finalist)
  auto offer = [&](const CandidateResult& r, bool finalist) {
    if (!r.ok() || r.provisional || !(r.timing.median_us > 0)) return;
    const std::string& v = r.candidate.variant->name();
    if (v == winner) return;
    const double us = finalist ? r.timing.median_us : r.timing.median_us * search_to_final;
    auto it = best.find(v);
    if (it != best.end() && (it->second.second > finalist || us >= it->second.first.median_us)) return;
    best[v] = {TunedAlternative{v, r.candidate.config, us}, finalist};
  };
  for (const CandidateResult& r : search.finalists) offer(r, true);
  for (const CandidateResult& r : search.results) offer(r, false);
  std::vector<TunedAlternative> out;
  for (auto& [v, a] : best) out.push_back(std::move(a.first));
  std::sort(out.begin(), out.end(), [](const TunedAlternative& a, const TunedAlternative& b) {
    return a.median_us != b.median_us ? a.median_us < b.median_us : a.variant < b.variant;
  });
  if (out.size() > kTuningMaxAlternatives) out.resize(kTuningMaxAlternatives);
  return out;
}

std::optional<TuningEntry> Tuner::current_entry(const Problem& problem) const {
  if (!problem.schema) return std::nullopt;
  const DeviceInfo& dev = device_info(problem.device);
  const std::string fp = dev.fingerprint();
  for (const TuningLayer& layer : rt_->db().layers()) {
    if (!layer.writable) continue;
    auto d = layer.table.find(fp);
    if (d == layer.table.end()) continue;
    auto o = d->second.find(problem.schema->name);
    if (o == d->second.end()) continue;
    auto k = o->second.find(problem.key());
    if (k == o->second.end()) continue;
    // An alternative timed with another build of its plugin makes the entry's evidence stale too:
    // tuned again on resume (a plugin changed that lost here).
    const auto& alts = k->second.alternatives;
    const bool alternatives_current = std::all_of(alts.begin(), alts.end(), [&](const TunedAlternative& a) {
      return rt_->dispatcher().alternative_current(a);
    });
    if (alternatives_current && rt_->dispatcher().entry_usable(k->second, problem, dev, nullptr)) return k->second;
  }
  return std::nullopt;
}

TuneReport Tuner::tune(const Problem& asked, const TuneOptions& options) {
  if (!asked.schema) throw UnknownOpError("Tuner::tune: the problem has no op schema");
  // A hand-made problem is checked as op() would have made it (schema, dims, dtype, alignment).
  rt_->dispatcher().check_problem(asked, "Tuner::tune");
  // A problem whose size dims are all 0 passed problem_from_shape when one of its tensors is not
  // empty (reduce_sum n=0 still writes its 1-element out), and was tuned and stored: its timing
  // is launch overhead, and its entry (f32|n=0|out16=0) the nearest neighbour of small problems.
  {
    std::string sizes;
    bool any_size = false, all_zero = true;
    for (int i = 0; i < asked.n_dims; ++i) {
      if (asked.schema->is_mode_dim(i)) continue;
      any_size = true;
      all_zero = all_zero && asked.dims[i] == 0;
      sizes += (sizes.empty() ? "" : ", ") + asked.schema->dim_names[i];
    }
    if (any_size && all_zero)
      throw ArgumentError("Tuner::tune: argument 'problem' " + asked.schema->name + " " + asked.key() +
                          " has every size dim (" + sizes + ") 0: there is nothing to compute, so nothing to tune "
                          "(expected at least one size > 0)");
  }
  if (options.total_seconds && !(*options.total_seconds >= 0))  // NaN would bound nothing
    throw ArgumentError("TuneOptions::total_seconds = " + scalar_text(*options.total_seconds) +
                        ", expected a number of seconds >= 0");
  // `> 0.0` is how the evaluator asks for its cap: a NaN or negative one timed every run uncapped.
  if (!(options.evaluator.max_seconds_per_candidate >= 0.0))
    throw ArgumentError("EvaluatorOptions::max_seconds_per_candidate = " +
                        scalar_text(options.evaluator.max_seconds_per_candidate) +
                        ", expected a number of seconds >= 0 (0: no cap)");
  // A name that is no variant of the op left the space empty, reported as "no variants are
  // registered": say which name is wrong instead.
  for (const std::string& name : options.space.variants) {
    const Variant* v = rt_->registry().find_variant(name);
    if (!v || v->op() != asked.schema->name)
      throw ArgumentError("TuneOptions::space.variants names '" + detail::printable(name) + "', which is not a variant of '" +
                          asked.schema->name + "' (kiln list " + asked.schema->name + " shows them)");
  }
  // Candidates are judged on the buffers the evaluator will allocate (dense unless pitched).
  Problem problem = asked;
  problem.align_bytes = layout_alignment(*asked.schema, asked, options.evaluator.pitched);
  TuneReport report;
  report.problem = problem;
  const DeviceInfo& dev = device_info(problem.device);
  report.device_key = dev.fingerprint();
  report.db_path = rt_->db().user_path();
  report.space = build_search_space(rt_->registry(), problem, dev, options.space);
  report.search.strategy = options.search.strategy;
  if (report.space.candidates.empty()) {
    report.error = "no variant of '" + problem.schema->name + "' can run " + problem.key() + " on " +
                   problem.device.to_string();
    if (report.space.variants_considered == 0) report.error += " (no variants are registered for it)";
    return report;
  }
  make_strategy(options.search.strategy);  // an unknown strategy fails before inputs are built
  if (options.store) rt_->db().check_writable();  // before the minutes of tuning, not after
  EvaluatorOptions evaluator_options = options.evaluator;
  if (!evaluator_options.oracle) evaluator_options.oracle = choose_oracle(rt_->registry(), problem, dev, evaluator_options);
  ProblemEvaluator evaluator(problem, evaluator_options);
  report.prepare_seconds = evaluator.prepare_seconds();
  report.expected_source = evaluator.expected_source();
  logger()->info("tune {} {}: {} candidates, inputs prepared in {:.2f} s, expected outputs from {}",
                 problem.schema->name, problem.key(), report.space.candidates.size(), report.prepare_seconds,
                 report.expected_source);
  SearchOptions search = options.search;
  if (options.total_seconds) {
    const double left = std::max(0.1 * *options.total_seconds, *options.total_seconds - report.prepare_seconds);
    search.budget.seconds = std::min(search.budget.seconds.value_or(left), left);
  }
  report.search = run_search(evaluator, report.space.candidates, search);
  evaluator.collect_reference();  // a background reference is collected (and timed) by now
  report.reference_seconds = evaluator.reference_seconds();
  if (!report.search.winner) {
    if (report.search.device_lost || report.search.cancelled)
      report.error = report.search.stop_reason;
    else if (report.search.results.empty())  // nothing ran: say why, not that all failed
      report.error = "no candidate was evaluated (" + report.search.stop_reason + ")";
    else
      report.error = "no candidate passed validation (" + std::to_string(report.search.results.size()) + " evaluated)";
    return report;
  }
  report.entry = make_entry(problem, *report.search.winner);
  report.entry->alternatives = alternatives_of(report.search);
  for (TunedAlternative& a : report.entry->alternatives)
    if (const Variant* v = rt_->registry().find_variant(a.variant)) a.plugin_build = rt_->registry().source_of(*v).build_id;
  if (options.store) {
    if (report.db_path.empty())
      throw TuningDbError("tuning database: no user file is configured (set KILN_CACHE_DIR or HOME)");
    // Under the dispatcher's lock (other threads' op() misses read the database), and the memo
    // cleared after: decisions memoised before this entry existed would hide it.
    rt_->dispatcher().update_database(
        [&] { rt_->db().put(report.device_key, problem.schema->name, problem.key(), *report.entry); });
    report.stored = true;
  }
  return report;
}

}  // namespace kiln
