#include "tune_pool.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json_document.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped

namespace kiln::cli {
namespace {

constexpr int kMaxSimulatedDevices = 64;

// "a, b,c" -> {"a", "b", "c"}; an empty item (",," or a trailing comma) stays as "".
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const auto comma = text.find(',', from);
    const std::string part = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const auto b = part.find_first_not_of(' ');
    const auto e = part.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? std::string() : part.substr(b, e - b + 1));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// "4.2 s" under 100 seconds, else "1:02:03".
std::string clock_text(double seconds) {
  if (seconds < 100) return fmt_fixed(seconds, 1) + " s";
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

// One task's place in the output: plan order, then fingerprint order.
struct TaskInfo {
  std::size_t order = 0;
  std::string op, problem;
};

}  // namespace

std::vector<PoolDevice> pool_devices(const TuneCli& cli) {
  std::vector<PoolDevice> out;
  if (cli.simulate_devices > 0) {
    if (cli.simulate_devices > kMaxSimulatedDevices)
      throw UsageError("--simulate-devices " + std::to_string(cli.simulate_devices) + ": expected 1 to " +
                       std::to_string(kMaxSimulatedDevices));
    for (int i = 0; i < cli.simulate_devices; ++i)
      out.push_back({Device::host(), "host#" + std::to_string(i), device_info(Device::host()).fingerprint()});
    return out;
  }
  std::vector<Device> devices;
  if (cli.devices == "all") {
    const int n = cuda_device_count();
    for (int i = 0; i < n; ++i) devices.push_back(Device::cuda(i));
    if (n == 0) devices.push_back(Device::host());  // like --device's default: CUDA if present, else the host
  } else {
    for (const std::string& text : split_list(cli.devices)) {
      if (text.empty()) throw UsageError("bad --devices '" + cli.devices + "': expected all or a list such as cuda:0,cuda:2");
      const Device d = parse_device(text);
      if (std::find(devices.begin(), devices.end(), d) != devices.end())
        throw UsageError("--devices names " + d.to_string() + " twice");
      devices.push_back(d);
    }
  }
  for (const Device& d : devices) out.push_back({d, d.to_string(), device_info(d).fingerprint()});
  return out;
}

int run_tune_pool(const TuneCli& cli, Runtime& rt, const Plan& plan, const std::vector<std::size_t>& selected,
                  const Shard& shard) {
  const std::vector<PoolDevice> devices = pool_devices(cli);
  // One representative device per fingerprint: each problem is tuned once for each.
  std::vector<const PoolDevice*> groups;
  for (const PoolDevice& d : devices)
    if (std::none_of(groups.begin(), groups.end(), [&](const PoolDevice* g) { return g->fingerprint == d.fingerprint; }))
      groups.push_back(&d);

  Tuner tuner(rt);
  TuneQueue queue;
  std::vector<TaskInfo> tasks;
  std::vector<std::string> labels;
  std::vector<std::pair<std::size_t, ProblemOutcome>> outcomes;  // (order, outcome)
  std::map<std::string, int> seen;                              // fingerprint|op|key -> plan line
  for (std::size_t idx : selected) {
    const PlanItem& item = plan.problems[idx];
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::size_t order = idx * groups.size() + g;
      ProblemOutcome out;
      out.op = item.op;
      out.problem = item.shape;
      out.device = groups[g]->fingerprint;
      Problem p;
      try {
        p = make_problem(rt, item.op, std::string(dtype_name(item.dtype)), item.shape, groups[g]->device);
      } catch (const ArgumentError& e) {  // unknown op, bad shape or dtype: the same for every device
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + detail::control_escaped(plan.source) + " line " + std::to_string(item.line) + ")" : "");
      } catch (const UsageError& e) {
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + detail::control_escaped(plan.source) + " line " + std::to_string(item.line) + ")" : "");
      }
      if (!out.status.empty()) {
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.emplace_back(order, std::move(out));
        break;
      }
      out.problem = p.key();
      const auto [dup, fresh] = seen.emplace(groups[g]->fingerprint + "|" + item.op + "|" + p.key(), item.line);
      if (!fresh) {
        out.status = "skipped";
        out.detail = "the same problem as plan line " + std::to_string(dup->second);
      } else if (!cli.force) {
        if (auto e = tuner.current_entry(p)) {
          out.status = "skipped";
          out.detail = "already tuned: " + e->variant + " [" + e->config.to_string() + "] (--force retunes)";
        }
      }
      if (!out.status.empty()) {
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.emplace_back(order, std::move(out));
        continue;
      }
      queue.add(idx, groups[g]->fingerprint);
      tasks.push_back({order, item.op, p.key()});
      labels.push_back(item.op + " " + p.key());
    }
  }

  PoolOptions po;
  po.worker_args = own_command_line();
  po.print_reports = !cli.json;
  po.verbose = cli.verbose;
  po.task_labels = labels;
  if (!cli.json)
    std::cerr << "kiln tune: " << queue.size() << " problem(s) to tune on " << devices.size() << " worker(s)"
              << (outcomes.empty() ? std::string() : ", " + std::to_string(outcomes.size()) + " skipped or failed first")
              << "\n";
  PoolRun run;
  if (queue.size() > 0) run = run_worker_pool(devices, queue, po);

  for (const PoolResult& r : run.results) {
    const TaskInfo& t = tasks[r.task];
    ProblemOutcome out;
    out.op = t.op;
    out.problem = t.problem;
    out.device = r.device;
    out.status = r.status;
    out.detail = r.detail;
    out.has_report = !r.report_text.empty();
    out.json = !r.report_json.empty() ? Json::raw(r.report_json)
                                      : outcome_json(t.op, t.problem, r.device, r.status, r.detail, nullptr);
    outcomes.emplace_back(t.order, std::move(out));
  }
  std::stable_sort(outcomes.begin(), outcomes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ProblemOutcome> sorted;
  for (auto& o : outcomes) sorted.push_back(std::move(o.second));
  const std::size_t expected = sorted.size() + (queue.size() - run.results.size());
  const OutcomeCounts counts = count_outcomes(sorted, expected);

  if (cli.json) {
    Json workers = Json::array();
    for (const PoolWorkerStats& w : run.workers)
      workers.push(Json::object()
                       .set("device", w.device)
                       .set("tuned", w.tuned)
                       .set("failed", w.failed)
                       .set("worker_deaths", w.deaths)
                       .set("workers_started", w.started)
                       .set("busy_seconds", w.busy_seconds)
                       .set("given_up", w.given_up));
    std::cout << json_document()
                     .set("problems", outcomes_json(sorted))
                     .set("tuned", counts.tuned)
                     .set("skipped", counts.skipped)
                     .set("failed", counts.failed)
                     .set("not_reached", counts.not_reached)
                     .set("interrupted", run.interrupted)
                     .set("shard", shard.to_string())
                     .set("workers", std::move(workers))
                     .set("wall_seconds", run.wall_seconds)
                     .set("db_path", rt.db().user_path())
                     .dump()
              << "\n";
  } else {
    print_outcomes(plan.source, sorted, counts);
    if (!run.workers.empty()) {
      Table t({"worker", "fingerprint", "tuned", "failed", "deaths", "busy", "busy share"},
              {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::right});
      for (std::size_t i = 0; i < run.workers.size(); ++i) {
        const PoolWorkerStats& w = run.workers[i];
        const double share = run.wall_seconds > 0 ? 100.0 * w.busy_seconds / run.wall_seconds : 0.0;
        t.add({w.device + (w.given_up ? " (given up)" : ""), devices[i].fingerprint, std::to_string(w.tuned),
               std::to_string(w.failed), std::to_string(w.deaths), clock_text(w.busy_seconds), fmt_fixed(share, 0) + "%"});
      }
      std::cout << "\n" << run.workers.size() << " worker(s), wall time " << clock_text(run.wall_seconds) << "\n";
      t.print(std::cout);
    }
  }
  if (run.interrupted || interrupted()) {
    std::cerr << "kiln tune: interrupted; finished problems are stored, run the same command to resume\n";
    return kExitInterrupted;
  }
  return counts.failed || counts.not_reached ? kExitFailed : kExitOk;
}

}  // namespace kiln::cli
