#include "tune_worker.hpp"

#include <chrono>
#include <sstream>

#include <kiln/kiln.hpp>

#include "common.hpp"
#include "tune_report.hpp"
#include "worker_protocol.hpp"

namespace kiln::cli {

int run_tune_worker(const TuneCli& cli) {
  const Device device = parse_device(cli.worker_device);
  auto rt = open_runtime("off", true);  // the parent already printed the plugin warnings
  const std::atomic<bool>* cancel = install_interrupt_flag();
  const Plan plan = load_tune_plan(cli);
  Tuner tuner(*rt);
  if (!write_message(kWorkerOutFd, {"ready", {device_info(device).fingerprint()}})) return kExitFailed;

  MessageReader reader;
  while (!interrupted()) {
    const auto m = read_message(kWorkerInFd, reader);
    if (!m) return kExitOk;  // the parent has no more work
    if (m->kind != "tune") throw Error("kiln tune worker: unexpected message '" + m->kind + "'");
    std::size_t index = plan.problems.size();
    try {
      index = std::stoul(m->field(0));
    } catch (const std::exception&) {
    }
    if (index >= plan.problems.size()) throw Error("kiln tune worker: no plan problem '" + m->field(0) + "'");
    const PlanItem& item = plan.problems[index];

    std::string status = "failed", detail, text, json, key = item.shape;
    try {
      const Problem p = make_problem(*rt, item.op, std::string(dtype_name(item.dtype)), item.shape, device);
      key = p.key();
      TuneOptions to = options_for(cli, &plan, &item, cancel);
      // On the host the reference thread would compete with the host variants being timed.
      if (device.is_host()) to.evaluator.background_reference = false;
      // What the parent's display shows, at most ten times a second.
      auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      std::size_t last_done = 0, last_planned = 0;
      auto send_progress = [&](std::size_t done, std::size_t planned, const std::string& note) {
        last_done = done;
        last_planned = planned;
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(100)) return;
        last = now;
        write_message(kWorkerOutFd, {"progress", {m->field(0), std::to_string(done), std::to_string(planned), note}});
      };
      to.search.on_result = [&](std::size_t done, std::size_t planned, const CandidateResult& r) {
        send_progress(done, planned, r.candidate.to_string());
      };
      to.search.on_status = [&](const std::string& what) { send_progress(last_done, last_planned, what); };
      const TuneReport report = tuner.tune(p, to);
      std::ostringstream block;
      print_tune_report(block, report, cli.verbose);
      text = block.str();
      detail = outcome_detail(report);
      json = outcome_json(item.op, key, device.to_string(), outcome_status(report), detail, &report).dump();
      status = report.search.device_lost ? "device_lost" : outcome_status(report);
    } catch (const Error& e) {  // a database that cannot be written, a problem the parent did not catch
      detail = e.what();
      json = outcome_json(item.op, key, device.to_string(), "failed", detail, nullptr).dump();
    }
    if (!write_message(kWorkerOutFd, {"result", {m->field(0), status, detail, text, json}})) return kExitFailed;
    if (status == "device_lost") return kExitDeviceLost;
  }
  return kExitInterrupted;
}

}  // namespace kiln::cli
