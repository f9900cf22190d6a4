// kiln bench --overhead: the host time one memo-hit op() call costs over launching the same kernel
// through its bound launch (the decision's PreparedLaunch: the plugin's launch code and the
// kernel launch, without kiln's validation, memo lookup and workspace lookup).
//
// Both are timed in batches small enough never to fill the launch queue (so the host measures its
// own work, not the GPU's), interleaved (op, bound, op, bound, ...), and the median batch is
// reported per call.  A benchmark, not a test: the figures depend on the machine.
#include "bench_modes.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json.hpp"

namespace kiln::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int run_overhead_bench(const OverheadOptions& o) {
  auto rt = open_runtime("off", o.json);
  const Device dev = parse_device(o.device);
  const std::string op_name = o.op.empty() ? "add" : o.op;
  const std::string shape = o.shape.empty() ? "1x1024" : o.shape;
  const Problem shape_p = make_problem(*rt, op_name, o.dtype, shape, dev);
  const OpSchema& schema = *shape_p.schema;
  if (o.iterations < 2 * o.batch) throw UsageError("--iters must be at least twice --batch");

  // Dense buffers of the problem's tensors, inputs filled (never zeros), outputs poisoned.
  std::vector<TensorSpec> specs;
  schema.tensor_specs(shape_p, specs).throw_if_error(op_name + ": tensor_specs");
  std::vector<Buffer> buffers;
  Args args;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    buffers.push_back(Buffer::alloc(dev, specs[i].dtype, specs[i].shape));
    Buffer host = Buffer::alloc(Device::host(), specs[i].dtype, specs[i].shape);
    if (schema.tensors[i].role == Role::output) host.fill_bytes(0xFF);
    else if (schema.fill_input) schema.fill_input(shape_p, static_cast<int>(i), host.ref(), 7 + i);
    else default_fill(host.ref(), 7 + i);
    buffers.back().copy_from_host(host.data(), host.bytes());
    args.push_tensor(buffers.back().ref());
  }
  if (schema.scalars_for) schema.scalars_for(shape_p, args);

  std::unique_ptr<OwnedStream> owned;
  Stream stream;
  if (dev.is_cuda()) {
    owned = std::make_unique<OwnedStream>(dev);
    stream = owned->get();
  }
  Op op = rt->op(op_name);
  op(args, stream);  // the memo miss: decides, binds, reserves the workspace
  stream.synchronize();
  const Problem p = op.problem(args);
  const Decision* d = rt->dispatcher().find(p);
  if (!d || !d->launch) throw Error("kiln bench --overhead: op() left no memoised decision for " + p.key());
  const std::size_t ws_bytes = d->workspace_bytes;
  void* ws = ws_bytes ? rt->workspace(dev, stream, ws_bytes) : nullptr;

  using clock = std::chrono::steady_clock;
  std::vector<double> op_us, bound_us;
  const int batches = o.iterations / o.batch;
  for (int b = 0; b < batches; ++b) {
    for (int which = 0; which < 2; ++which) {
      stream.synchronize();
      const auto t0 = clock::now();
      if (which == 0) {
        for (int i = 0; i < o.batch; ++i) op(args, stream);
      } else {
        for (int i = 0; i < o.batch; ++i) d->launch->run(args, p, ws, stream).throw_if_error("bound launch");
      }
      const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count() / o.batch;
      (which == 0 ? op_us : bound_us).push_back(us);
    }
  }
  stream.synchronize();
  const double op_med = median(op_us), bound_med = median(bound_us);
  if (o.json) {
    Json j = Json::object();
    j.set("op", op_name).set("problem", p.key()).set("device", dev.to_string());
    j.set("variant", d->variant->name()).set("config", d->config.to_string());
    j.set("calls", batches * o.batch).set("batch", o.batch);
    j.set("op_us_per_call", op_med).set("bound_us_per_call", bound_med).set("overhead_us", op_med - bound_med);
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "overhead of a memo-hit op() call: " << op_name << " " << p.key() << " on " << dev.to_string() << " ("
              << d->variant->name() << " [" << d->config.to_string() << "]), " << batches * o.batch
              << " calls of each, batches of " << o.batch << ", median batch\n";
    std::cout << "  op():         " << fmt_fixed(op_med, 3) << " us per call\n";
    std::cout << "  bound launch: " << fmt_fixed(bound_med, 3) << " us per call (the decision's PreparedLaunch)\n";
    std::cout << "  difference:   " << fmt_fixed(op_med - bound_med, 3) << " us\n";
  }
  return kExitOk;
}

}  // namespace kiln::cli
