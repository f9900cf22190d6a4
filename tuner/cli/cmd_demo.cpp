// kiln demo: the whole library in one run — load every plugin, list the devices, then run each
// registered op once through op() on a mid-size problem (on the GPU when there is one, else a
// small one on the host backend), and show what op() chose and why, its median time and
// throughput, and its error against the host reference.  Exit 1 if any result is wrong.
#include <iostream>
#include <memory>

#include <kiln/tuner/problem_data.hpp>
#include <kiln/tuner/timer.hpp>
#include <kiln/tuner/tuner.hpp>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "range_check.hpp"
#include "devices_report.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "op_shapes.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped

namespace kiln::cli {
namespace {

struct DemoRow {
  std::string op, problem, variant, config, source, median, throughput, error, status;
  Json json = Json::object();
  bool wrong = false;
};

DemoRow run_one(Runtime& rt, const OpSchema& schema, Device device, int runs, int warmup) {
  DemoRow row;
  row.op = schema.name;
  row.json.set("op", schema.name);
  const std::string shape = demo_shape(schema, device.is_cuda());
  const DType dtype = schema.dtypes.empty() ? DType::f32 : schema.dtypes.front();
  Problem problem;
  std::unique_ptr<ProblemData> data;
  try {
    problem = schema.problem_from_shape(dtype, shape, device);
    data = std::make_unique<ProblemData>(schema, problem, device, /*seed=*/42);
  } catch (const std::exception& e) {
    row.problem = shape.empty() ? "(none)" : shape;
    row.status = std::string("skipped: cannot build a demo problem (") + e.what() + ")";
    row.json.set("status", "skipped").set("reason", e.what());
    return row;
  }
  row.problem = problem.key();
  row.json.set("problem", problem.key()).set("device", device.to_string());
  try {
    Op op = rt.op(schema.name);
    OwnedStream stream(device);
    const Args& args = data->device_args();
    data->poison_outputs();
    op(args, stream);
    stream.synchronize();
    const double error = data->error();
    // What op() ran: the dispatcher's memoised decision for these arguments.
    const Problem derived = op.problem(args);
    const Decision& d = rt.dispatcher().decide(derived, device_info(device));
    row.variant = d.variant ? d.variant->name() : "?";
    row.config = d.config.to_string();
    row.source = decision_source_name(d.from);
    if (d.hit) row.source += std::string(" (") + fallback_level_name(d.hit->level) + ")";
    const double tol = data->tolerance();
    row.wrong = !(error <= tol);
    row.error = fmt(error, 2) + " (tol " + fmt(tol, 2) + ")";

    TimingOptions t;
    t.runs = runs;
    t.warmup = warmup;
    std::unique_ptr<CacheFlusher> flusher;
    if (device.is_cuda()) flusher = std::make_unique<CacheFlusher>(device);
    const Timing timing = time_runs(device, stream, [&] { op(args, stream); }, t, flusher.get());
    const double tp = throughput(schema, problem, timing.median_us);
    row.median = fmt_us(timing.median_us);
    row.throughput = fmt_throughput(tp, throughput_unit(schema));
    row.status = row.wrong ? "WRONG" : "ok";
    row.json.set("variant", row.variant)
        .set("config", config_json(d.config))
        .set("source", row.source)
        .set("median_us", timing.median_us)
        .set("mad_us", timing.mad_us)
        .set("throughput", tp)
        .set("throughput_unit", throughput_unit(schema))
        .set("error", error)
        .set("tolerance", tol)
        .set("status", row.wrong ? "wrong" : "ok");
  } catch (const std::exception& e) {
    row.wrong = true;
    row.status = std::string("ERROR: ") + e.what();
    row.json.set("status", "error").set("reason", e.what());
  }
  return row;
}

}  // namespace

Command make_demo_command(CLI::App& parent) {
  struct Opts {
    std::string device;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("demo", "Load every plugin and run each op once through op()");
  c.app->add_option("--device", o->device, "host, cuda or cuda:N (default: CUDA 0 if present, else host)")
      ->check(not_empty("host, cuda or cuda:N"));
  c.app->add_flag("--json", o->json, "Print JSON");
  c.usage = "usage: kiln demo [--device D] [--json]";
  c.run = [o] {
    auto rt = open_runtime("", true);  // KILN_TUNE is honoured: the demo is what an application sees
    const Device device = parse_device(o->device);
    const bool gpu = device.is_cuda();
    const int runs = gpu ? 20 : 5, warmup = gpu ? 3 : 1;
    std::vector<DemoRow> rows;
    for (const std::string& name : rt->registry().op_names()) rows.push_back(run_one(*rt, rt->registry().op(name), device, runs, warmup));
    bool wrong = false;
    for (const auto& r : rows) wrong |= r.wrong;

    if (o->json) {
      Json plugins = Json::array(), errors = Json::array(), ops = Json::array();
      for (const auto& p : rt->loaded_plugins()) plugins.push(p);
      for (const auto& e : rt->plugin_errors()) errors.push(Json::object().set("file", e.file).set("reason", e.reason));
      for (auto& r : rows) ops.push(std::move(r.json));
      std::cout << json_document()
                       .set("devices", devices_json(rt->devices()))
                       .set("plugins", std::move(plugins))
                       .set("plugin_errors", std::move(errors))
                       .set("device", device.to_string())
                       .set("tune_mode", rt->tune_mode())
                       .set("ops", std::move(ops))
                       .set("ok", !wrong && !rows.empty())
                       .dump()
                << "\n";
      return wrong || rows.empty() ? kExitFailed : kExitOk;
    }
    std::cout << "devices:\n";
    print_devices(std::cout, rt->devices());
    std::cout << "\nplugins loaded: " << rt->loaded_plugins().size() << "\n";
    for (const auto& p : rt->loaded_plugins()) std::cout << "  " << p << "\n";
    if (!rt->plugin_errors().empty()) {
      std::cout << "plugin load errors:\n";
      for (const auto& e : rt->plugin_errors())
        std::cout << "  " << detail::control_escaped(e.file) << ": " << detail::control_escaped(e.reason) << "\n";
    }
    for (const auto& e : rt->db().errors()) std::cout << "tuning database: " << e << "\n";
    std::cout << "\nop() on " << device.to_string() << " (" << device_info(device).fingerprint() << "), KILN_TUNE="
              << rt->tune_mode() << ", median of " << runs << " runs:\n";
    if (rows.empty()) {
      std::cout << "  no ops registered: no plugin was loaded (set KILN_PLUGIN_PATH)\n";
      return kExitFailed;
    }
    Table t({"op", "problem", "variant", "config", "chosen from", "median", "throughput", "error", "status"},
            {Align::left, Align::left, Align::left, Align::left, Align::left, Align::right, Align::right, Align::left,
             Align::left});
    for (const auto& r : rows) t.add({r.op, r.problem, r.variant, r.config, r.source, r.median, r.throughput, r.error, r.status});
    t.print(std::cout, "  ");
    std::size_t bad = 0;
    for (const auto& r : rows) bad += r.wrong ? 1 : 0;
    std::cout << (bad ? std::to_string(bad) + " op(s) gave a wrong result or failed\n" : "all results match the host reference\n");
    return wrong ? kExitFailed : kExitOk;
  };
  return c;
}

}  // namespace kiln::cli
