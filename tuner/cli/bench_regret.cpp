// kiln bench --regret --problems FILE: for each problem, op()'s own choice (the dispatcher's
// memoised decision: exact entry, neighbour, model or fallback) and every candidate — each
// variant at its default config and, where the database has an exact entry for it, its tuned
// config — validated and timed the same way in the same process.
// regret = time(op()'s choice) / time(fastest candidate), >= 1; reported per problem and as the
// geometric mean, with --json.  KILN_TUNE is honoured as op() honours it: by default (race) op()'s
// choice is the one its first-use race kept; KILN_TUNE=off measures the dispatcher's prediction.
#include "bench_modes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>
#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/problem_data.hpp>
#include <kiln/tuner/oracle.hpp>
#include <kiln/tuner/search_space.hpp>

#include "bench_rounds.hpp"
#include "common.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln::cli {
namespace {

// A candidate whose median passes this multiple of the fastest so far is given up (racing).
constexpr double kGiveUpFactor = 1.5;

// Candidates timed one after another favour the first on a GPU whose clock drops under sustained
// load: on the H200, bf16 16384 x 8192 x 11008 timed cuBLASLt (first) at 3724.8 us and gemm_wgmma
// (right after it) at 4392.4, where op()'s first-use race, which interleaves them, had them level
// (docs/performance.md, thirteenth session).  So the candidates within kSettleFactor of the
// fastest, and op()'s choice, are timed again in interleaved rounds (bench_visits, as `kiln bench`
// times its rows: forward, then backward, so drift cancels), and their pooled samples give the
// medians the regret uses.
constexpr double kSettleFactor = 1.25;

struct Row {
  std::string op, problem, evidence, chosen, best;
  double op_us = 0, best_us = 0, regret = 0;
  double seconds = 0;  // wall time spent on this problem (inputs, checks, timings)
  int candidates = 0, gave_up = 0;
  int settled = 0;  // near ties timed again in interleaved rounds (0: none)
  std::vector<std::pair<std::string, double>> timed;  // every candidate that ran: (candidate, median us)
  std::string vendor;  // the fastest vendor-library candidate (VariantDesc::vendor), if one ran
  double vendor_us = 0;
  std::string error;  // why there is no regret for this problem
  std::string expected;  // what the outputs were checked against (host reference or oracle)
};

bool is_yaml(const std::string& path) {
  auto ends = [&](const char* s) {
    const std::string e(s);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

}  // namespace

int run_regret_bench(const RegretOptions& o) {
  if (o.problems.empty()) throw UsageError("--regret needs --problems FILE (a plan .yaml or a problem list)");
  const Plan plan = is_yaml(o.problems) ? load_plan(o.problems) : load_problem_list(o.problems);
  if (plan.problems.empty()) throw UsageError("--problems " + detail::printable(o.problems) + ": no problems in the file");
  auto rt = open_runtime("", o.json);  // KILN_TUNE as op() sees it (race unless set)

  std::vector<Row> rows;
  ProgressBar bar("bench --regret " + o.problems);
  std::size_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  // A lease with a time limit keeps what was measured: the rest are listed, not lost.  The first
  // problem always runs, so a limit shorter than one problem still measures something.
  auto past_limit = [&] {
    return o.time_limit_s > 0 && done > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.time_limit_s;
  };
  for (const PlanItem& item : plan.problems) {
    Row row;
    row.op = item.op;
    if (past_limit()) {
      row.problem = item.op + " " + item.shape;
      row.error = "not measured: --time-limit reached";
      rows.push_back(std::move(row));
      ++done;
      continue;
    }
    bar.update(done, plan.problems.size(), item.op + " " + item.shape);
    const auto problem_start = std::chrono::steady_clock::now();
    try {
      const Device dev = parse_device(item.device ? *item.device : o.device);
      const OpSchema& schema = rt->registry().op(item.op);
      Problem p = schema.problem_from_shape(item.dtype, item.shape, dev);
      p.align_bytes = layout_alignment(schema, p, /*pitched=*/false);  // the dense buffers timed
      row.problem = p.key();
      const DeviceInfo& info = device_info(dev);
      const Decision& decision = rt->dispatcher().decide(p, info);  // what op() runs, memoised
      row.evidence = evidence_name(decision.evidence);
      if (decision.raced) row.evidence += ", raced: " + decision.race_note;

      // Candidates: every variant's default config, its exact tuned config, and op()'s choice.
      std::vector<Candidate> cands;
      auto add = [&](const Variant* v, const Config& c) {
        for (const Candidate& x : cands)
          if (x.variant == v && x.config == c) return;
        if (candidate_usable(*v, c, p, info, nullptr)) cands.push_back({v, c, false});
      };
      for (const Variant* v : rt->registry().variants(item.op)) {
        if (v->device_kind() != dev.kind || (v->desc().reference && dev.is_cuda())) continue;
        add(v, v->default_config_for(info, p));
      }
      const std::string fp = info.fingerprint();
      for (const TuningLayer& layer : rt->db().layers()) {
        auto d = layer.table.find(fp);
        if (d == layer.table.end()) continue;
        auto op_it = d->second.find(item.op);
        if (op_it == d->second.end()) continue;
        auto e = op_it->second.find(p.key());
        if (e == op_it->second.end()) continue;
        if (const Variant* v = rt->registry().find_variant(e->second.variant)) add(v, e->second.config);
      }
      add(decision.variant, decision.config);
      row.chosen = decision.variant->name() + " [" + decision.config.to_string() + "]";

      EvaluatorOptions eo;
      eo.seed = o.input_seed;
      eo.warm = o.warm;
      eo.max_seconds_per_candidate = 2.0;
      // The tuner's oracle rule (oracle.hpp): a large problem's expected outputs come from the
      // vendor variant checked on sampled elements against the f64 host reference, not from the
      // host reference of every element (minutes for a bf16 16384 x 8192 x 11008).
      eo.oracle = choose_oracle(rt->registry(), p, info, eo);
      ProblemEvaluator ev(p, eo);
      row.expected = ev.expected_source();
      TimingOptions t;
      t.runs = o.runs;
      t.warmup = o.warmup;
      t.warm = o.warm;
      t.min_runs = std::min(o.runs, 5);
      bool op_ok = false;
      std::size_t op_index = 0;
      struct Timed {
        std::size_t cand;  // index into cands
        double us;
        bool gave_up;
      };
      std::vector<Timed> timed;
      for (const Candidate& c : cands) {
        // A large problem takes a minute (inputs, oracle, every candidate): the limit also stops
        // one under way, so that a caller's hard timeout a little past it still gets the JSON.
        if (past_limit()) throw Error("not measured: --time-limit reached during this problem");
        const bool is_op_choice = c.variant == decision.variant && c.config == decision.config;
        CandidateResult r = ev.check(c);
        // Racing: a candidate clearly slower than the fastest so far cannot be the best, so it
        // stops after a few runs (its time is then a lower bound).  op()'s choice always runs
        // in full: the regret's numerator.
        TimingOptions tc = t;
        if (!is_op_choice && !row.best.empty()) tc.give_up_above_us = kGiveUpFactor * row.best_us;
        if (r.ok()) r = ev.time(c, tc);
        if (!r.ok()) {
          if (r.device_lost) throw Error("the device was lost timing " + c.to_string());
          continue;
        }
        ++row.candidates;
        if (r.timing.gave_up) ++row.gave_up;
        const double us = r.timing.median_us;
        timed.push_back({static_cast<std::size_t>(&c - cands.data()), us, r.timing.gave_up});
        if (is_op_choice) {
          op_index = timed.size() - 1;
          op_ok = true;
        }
        if (!r.timing.gave_up && (row.best.empty() || us < row.best_us)) {
          row.best_us = us;
          row.best = c.to_string();
        }
      }
      if (!op_ok) throw Error("op()'s choice " + row.chosen + " did not run successfully");

      // The near ties again, interleaved (kSettleFactor above).
      std::vector<std::size_t> near;  // indices into timed
      for (std::size_t i = 0; i < timed.size(); ++i)
        if (i == op_index || (!timed[i].gave_up && timed[i].us <= kSettleFactor * row.best_us)) near.push_back(i);
      if (near.size() >= 2) {
        std::vector<std::vector<double>> pooled(near.size());
        for (const BenchVisit& v : bench_visits(near.size(), o.runs, 1)) {
          if (past_limit()) break;
          TimingOptions tv = t;
          tv.runs = v.runs;
          tv.min_runs = v.runs;
          tv.warmup = v.warmup;
          CandidateResult r = ev.time(cands[timed[near[v.row]].cand], tv);
          if (r.ok()) pooled[v.row].insert(pooled[v.row].end(), r.timing.samples_us.begin(), r.timing.samples_us.end());
        }
        for (std::size_t i = 0; i < near.size(); ++i)
          if (!pooled[i].empty()) timed[near[i]].us = summarise(pooled[i]).median_us;
        row.settled = static_cast<int>(near.size());
        row.best.clear();
        for (const Timed& x : timed)
          if (!x.gave_up && (row.best.empty() || x.us < row.best_us)) {
            row.best_us = x.us;
            row.best = cands[x.cand].to_string();
          }
      }
      for (const Timed& x : timed) {
        const Candidate& c = cands[x.cand];
        row.timed.emplace_back(c.to_string(), x.us);
        if (c.variant->desc().vendor && (row.vendor.empty() || x.us < row.vendor_us)) {
          row.vendor = c.to_string();
          row.vendor_us = x.us;
        }
      }
      row.op_us = timed[op_index].us;
      row.regret = row.op_us / row.best_us;
    } catch (const std::exception& e) {
      row.error = e.what();
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - problem_start).count();
    rows.push_back(std::move(row));
    bar.update(++done, plan.problems.size(), item.op + " " + item.shape);
  }
  bar.finish();

  double log_sum = 0, worst = 0;
  int measured = 0;
  for (const Row& r : rows)
    if (r.error.empty()) {
      log_sum += std::log(r.regret);
      worst = std::max(worst, r.regret);
      ++measured;
    }
  const double geomean = measured ? std::exp(log_sum / measured) : 0.0;

  if (o.json) {
    Json arr = Json::array();
    for (const Row& r : rows) {
      Json j = Json::object();
      j.set("op", r.op).set("problem", r.problem);
      if (!r.error.empty()) {
        j.set("error", r.error);
      } else {
        j.set("evidence", r.evidence).set("chosen", r.chosen).set("op_us", r.op_us).set("best", r.best);
        j.set("best_us", r.best_us).set("regret", r.regret).set("candidates", r.candidates);
        j.set("gave_up", r.gave_up).set("settled", r.settled).set("seconds", r.seconds).set("expected", r.expected);
        Json timed = Json::object();  // op() against any candidate, e.g. the vendor's
        for (const auto& t : r.timed) timed.set(t.first, t.second);
        j.set("candidate_us", std::move(timed));
        if (!r.vendor.empty()) j.set("vendor", r.vendor).set("vendor_us", r.vendor_us);
      }
      arr.push(std::move(j));
    }
    Json out = Json::object();
    // With nothing measured there is no regret: 0 read as "better than perfect" to a script.
    out.set("tune_mode", rt->tune_mode()).set("problems", std::move(arr)).set("measured", measured);
    out.set("geomean_regret", measured ? Json(geomean) : Json()).set("max_regret", measured ? Json(worst) : Json());
    std::cout << out.dump() << "\n";
  } else {
    Table tab({"op", "problem", "op() runs", "evidence", "op()", "best", "best candidate", "regret"},
              {Align::left, Align::left, Align::left, Align::left, Align::right, Align::right, Align::left, Align::right});
    for (const Row& r : rows) {
      if (!r.error.empty()) {
        tab.add({r.op, r.problem, "-", "-", "-", "-", "error: " + r.error, "-"});
        continue;
      }
      tab.add({r.op, r.problem, r.chosen, r.evidence, fmt_us(r.op_us), fmt_us(r.best_us), r.best, fmt_fixed(r.regret, 3)});
    }
    tab.print(std::cout);
    std::cout << "KILN_TUNE=" << rt->tune_mode() << "; regret = time(op()'s choice) / time(fastest candidate); ";
    if (measured)
      std::cout << "geomean " << fmt_fixed(geomean, 3) << ", max " << fmt_fixed(worst, 3) << " over " << measured << " of "
                << rows.size() << " problems\n";
    else
      std::cout << "no regret: none of the " << rows.size() << " problems was measured (see the errors above)\n";
  }
  return measured == static_cast<int>(rows.size()) ? kExitOk : kExitFailed;
}

}  // namespace kiln::cli
