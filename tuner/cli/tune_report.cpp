#include "tune_report.hpp"

#include "common.hpp"
#include "csv.hpp"
#include "json_document.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped

namespace kiln::cli {
namespace {

std::string device_text(const TuneReport& r) { return r.problem.device.to_string() + " (" + r.device_key + ")"; }

}  // namespace

Json candidate_json(const CandidateResult& r, const Problem& problem) {
  Json j = Json::object();
  j.set("variant", r.candidate.variant ? r.candidate.variant->name() : "")
      .set("config", config_json(r.candidate.config))
      .set("default_config", r.candidate.is_default)
      .set("outcome", outcome_name(r.outcome));
  if (!r.reason.empty()) j.set("reason", r.reason);
  if (r.outcome != Outcome::rejected) j.set("error", r.error).set("tolerance", r.tolerance);
  if (r.ok() && r.timing.samples > 0) {
    j.set("median_us", r.timing.median_us).set("mad_us", r.timing.mad_us).set("samples", r.timing.samples);
    if (problem.schema)
      j.set("throughput", throughput(*problem.schema, problem, r.timing.median_us))
          .set("throughput_unit", throughput_unit(*problem.schema));
    if (r.timing.gave_up) j.set("stopped_early", true);
  }
  if (r.device_lost) j.set("device_lost", true);
  return j;
}

Json tune_report_json(const TuneReport& r) {
  const Problem& p = r.problem;
  Json j = Json::object();
  j.set("op", p.schema ? p.schema->name : "")
      .set("problem", p.key())
      .set("device", p.device.to_string())
      .set("device_key", r.device_key)
      .set("strategy", r.search.strategy)
      .set("space_size", r.space.candidates.size())
      .set("evaluations", r.search.evaluations())
      .set("stop_reason", r.search.stop_reason)
      .set("prepare_seconds", r.prepare_seconds)
      .set("reference_seconds", r.reference_seconds)
      .set("expected_source", r.expected_source)
      .set("search_seconds", r.search.seconds);
  Json rejected = Json::array();
  for (const Rejection& x : r.space.rejected)
    rejected.push(Json::object()
                      .set("variant", x.example.variant->name())
                      .set("example_config", config_json(x.example.config))
                      .set("configs", x.configs)
                      .set("kind", x.kind == Rejection::Kind::variant ? "variant"
                                   : x.kind == Rejection::Kind::constraint ? "constraint" : "unsupported")
                      .set("reason", x.reason));
  j.set("rejected", std::move(rejected));
  Json results = Json::array();
  for (const auto& c : r.search.results) results.push(candidate_json(c, p));
  j.set("results", std::move(results));
  Json finalists = Json::array();
  for (const auto& c : r.search.finalists) finalists.push(candidate_json(c, p));
  j.set("finalists", std::move(finalists));
  if (r.search.winner) j.set("winner", candidate_json(*r.search.winner, p)).set("choice", r.search.choice_note);
  j.set("stored", r.stored);
  if (r.stored) j.set("db_path", r.db_path);
  if (!r.error.empty()) j.set("error", r.error);
  return j;
}

void print_tune_report(std::ostream& out, const TuneReport& r, bool verbose) {
  const Problem& p = r.problem;
  const std::string op = p.schema ? p.schema->name : "?";
  const std::string unit = p.schema ? throughput_unit(*p.schema) : "";
  out << op << " " << p.key() << " on " << device_text(r) << "\n";
  out << "  space: " << r.space.candidates.size() << " candidate(s) from " << r.space.variants_considered
      << " variant(s)";
  if (!r.space.rejected.empty()) out << "; " << r.space.rejected.size() << " rejection reason(s)" << (verbose ? "" : " (-v lists them)");
  out << "\n";
  if (verbose)
    for (const Rejection& x : r.space.rejected) out << "    rejected " << x.to_string() << "\n";
  if (!r.search.results.empty() || r.prepare_seconds > 0) {
    out << "  search: " << r.search.strategy << ", " << r.search.evaluations() << " evaluated in "
        << fmt_fixed(r.search.seconds, 2) << " s, " << r.search.stop_reason << " (inputs " << fmt_fixed(r.prepare_seconds, 2)
        << " s, expected outputs " << fmt_fixed(r.reference_seconds, 2) << " s"
        << (r.prepare_seconds < r.reference_seconds ? ", computed alongside the search" : "") << ")\n";
    if (!r.expected_source.empty()) out << "  expected outputs: " << r.expected_source << "\n";
  }
  std::vector<const CandidateResult*> bad;
  for (const auto& c : r.search.results)
    if (!c.ok()) bad.push_back(&c);
  if (!bad.empty()) {
    out << "  failed: " << bad.size() << " (never chosen)\n";
    const std::size_t shown = verbose ? bad.size() : std::min<std::size_t>(bad.size(), 10);
    for (std::size_t i = 0; i < shown; ++i)
      out << "    " << bad[i]->candidate.to_string() << ": " << outcome_name(bad[i]->outcome) << ": " << bad[i]->reason << "\n";
    if (shown < bad.size()) out << "    ... " << bad.size() - shown << " more (-v lists them)\n";
  }
  if (verbose && !r.search.results.empty()) {
    Table t({"candidate", "median", "MAD", "runs", "note"}, {Align::left, Align::right, Align::right, Align::right, Align::left});
    for (const auto& c : r.search.results)
      if (c.ok()) t.add({c.candidate.to_string(), fmt_us(c.timing.median_us), fmt_us(c.timing.mad_us),
                         std::to_string(c.timing.samples), c.reason});
    out << "  evaluated:\n";
    t.print(out, "    ");
  }
  if (r.search.finalists.size() > 1) {
    out << "  finalists, re-timed interleaved:\n";
    Table t({"variant", "config", "median", "MAD", "samples", "throughput"},
            {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right});
    for (const auto& c : r.search.finalists)
      t.add({c.candidate.variant->name(), c.candidate.config.to_string(), fmt_us(c.timing.median_us),
             fmt_us(c.timing.mad_us), std::to_string(c.timing.samples),
             fmt_throughput(throughput(*p.schema, p, c.timing.median_us), unit)});
    t.print(out, "    ");
  }
  if (r.search.winner) {
    const auto& w = *r.search.winner;
    out << "  chosen: " << w.candidate.to_string() << "  " << fmt_us(w.timing.median_us) << "  "
        << fmt_throughput(throughput(*p.schema, p, w.timing.median_us), unit) << "  (" << r.search.choice_note << ")\n";
    if (r.stored)
      out << "  stored in " << detail::control_escaped(r.db_path) << "\n";
    else
      out << "  not stored (--no-store)\n";
  }
  if (!r.error.empty()) out << "  not tuned: " << r.error << "\n";
}

void print_tune_csv_header(std::ostream& out) {
  out << csv_row({"op", "problem", "device", "variant", "config", "default_config", "outcome", "median_us", "mad_us",
                  "samples", "throughput", "throughput_unit", "error", "winner"});
}

void print_tune_csv_rows(std::ostream& out, const TuneReport& r) {
  const Problem& p = r.problem;
  for (const CandidateResult& c : r.search.results) {
    const bool timed = c.ok() && c.timing.samples > 0;
    const bool winner = r.search.winner && r.search.winner->candidate.variant == c.candidate.variant &&
                        r.search.winner->candidate.config == c.candidate.config;
    out << csv_row({p.schema ? p.schema->name : "", p.key(), p.device.to_string(),
                    c.candidate.variant ? c.candidate.variant->name() : "", c.candidate.config.to_string(),
                    c.candidate.is_default ? "1" : "0", outcome_name(c.outcome),
                    timed ? csv_number(c.timing.median_us) : "", timed ? csv_number(c.timing.mad_us) : "",
                    timed ? std::to_string(c.timing.samples) : "",
                    timed && p.schema ? csv_number(throughput(*p.schema, p, c.timing.median_us)) : "",
                    timed && p.schema ? throughput_unit(*p.schema) : "",
                    c.outcome != Outcome::rejected ? csv_number(c.error) : "", winner ? "1" : "0"});
  }
}

}  // namespace kiln::cli
