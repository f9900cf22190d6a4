// Every op captured in a CUDA graph through op() and replayed on fresh inputs, checked against the
// host reference: once with the vendor plugin present (untuned problems fall back to cuBLAS and
// CUB, which must use kiln's reserved workspace) and once with kiln's own kernels only.  Also: a
// problem seen for the first time during capture is refused with a clear DeviceError instead of
// breaking the capture, and a memo-hit op() on a prepared stream captures fine.
#include <cuda_runtime.h>

#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "register_elementwise.hpp"
#include "register_gemm.hpp"
#include "register_gemv.hpp"
#include "register_histogram.hpp"
#include "register_reduction.hpp"
#include "register_topk.hpp"
#include "register_transpose.hpp"
#include "register_vendor.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime make_runtime(bool with_vendor) {
  kiln::Registry reg;
  for (kiln::Status s : {register_gemm(reg), register_gemv(reg), register_reduction(reg), register_transpose(reg),
                         register_elementwise(reg), register_histogram(reg), register_topk(reg)})
    s.throw_if_error("registering the plugins");
  if (with_vendor) register_vendor(reg).throw_if_error("registering the vendor plugin");
  kiln::RuntimeOptions o;
  o.load_plugins = false;
  o.use_default_db_paths = false;
  o.tune_mode = "off";
  return kiln::Runtime(std::move(reg), o);
}

void cuda_ok(cudaError_t err, const char* what) {
  INFO(what << ": " << cudaGetErrorString(err));
  REQUIRE(err == cudaSuccess);
}

struct Case {
  const char* op;
  std::vector<std::int64_t> dims;
};

// Odd sizes (not multiples of any tile), every op.
const std::vector<Case> kCases = {
    {"gemm", {129, 131, 67, 0}}, {"gemm", {256, 132, 96, 1}}, {"gemv", {257, 1031}},
    {"dot", {100003}},           {"reduce_sum", {100003}},    {"transpose", {129, 257}},
    {"histogram", {100003}},     {"histogram_range", {100003, 100}},
    {"topk", {7, 1000, 10, 1}},  {"add", {33, 1025}},
};

// Copies every tensor of `from` into the same-shaped dense tensor of `to` (device to device).
void copy_tensors(const kiln::Args& from, const kiln::Args& to, cudaStream_t stream) {
  for (int i = 0; i < from.tensor_count(); ++i) {
    REQUIRE(from.tensor(i).span_bytes() == to.tensor(i).span_bytes());
    cuda_ok(cudaMemcpyAsync(to.tensor(i).data, from.tensor(i).data, static_cast<std::size_t>(from.tensor(i).span_bytes()),
                            cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
  }
}

void capture_and_replay(kiln::Runtime& rt, const Case& c) {
  const kiln::OpSchema& schema = rt.registry().op(c.op);
  const kiln::Problem p = schema.problem_from_dims(schema.dtypes.front(), c.dims, kGpu);
  INFO(c.op << " " << p.key());
  kiln::ProblemData bound(schema, p, kGpu, /*seed=*/11);   // the buffers the graph is captured on
  kiln::ProblemData fresh(schema, p, kGpu, /*seed=*/12);   // new inputs and their reference
  kiln::OwnedStream stream(kGpu);
  const auto s = static_cast<cudaStream_t>(stream.get().handle());
  kiln::Op op = rt.op(c.op);

  op.prepare(bound.device_args(), stream);  // decide and reserve outside the capture
  const kiln::Decision* d = rt.dispatcher().find(op.problem(bound.device_args()));
  REQUIRE(d != nullptr);
  INFO("op() runs " << d->variant->name() << " [" << d->config.to_string() << "] (" << kiln::evidence_name(d->evidence)
                    << ")");

  cudaGraph_t graph = nullptr;
  cuda_ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  std::string thrown;
  try {
    op(bound.device_args(), stream);
  } catch (const kiln::Error& e) {
    thrown = e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  INFO("op() during capture threw: " << thrown);
  REQUIRE(thrown.empty());
  cuda_ok(end, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

  // Replay twice on fresh inputs (outputs poisoned first), each checked against the reference.
  for (int replay = 0; replay < 2; ++replay) {
    fresh.poison_outputs();
    copy_tensors(fresh.device_args(), bound.device_args(), s);
    cuda_ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    copy_tensors(bound.device_args(), fresh.device_args(), s);
    cuda_ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    const double error = fresh.error();
    CAPTURE(replay, error, fresh.tolerance());
    CHECK(error <= fresh.tolerance());
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace

TEST_CASE("every op captures in a CUDA graph and replays on fresh inputs (vendor fallbacks)") {
  kiln::Runtime rt = make_runtime(true);
  for (const Case& c : kCases) capture_and_replay(rt, c);
}

TEST_CASE("every op captures in a CUDA graph and replays on fresh inputs (kiln kernels only)") {
  kiln::Runtime rt = make_runtime(false);
  for (const Case& c : kCases) capture_and_replay(rt, c);
}

TEST_CASE("a problem first seen during capture is refused without breaking the capture") {
  kiln::Runtime rt = make_runtime(true);
  const kiln::OpSchema& schema = rt.registry().op("reduce_sum");
  const kiln::Problem p = schema.problem_from_dims(kiln::f32, {100003}, kGpu);
  kiln::ProblemData data(schema, p, kGpu, 3);
  kiln::OwnedStream stream(kGpu);
  const auto s = static_cast<cudaStream_t>(stream.get().handle());
  cuda_ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  std::string msg;
  try {
    rt.op("reduce_sum")(data.device_args(), stream);
  } catch (const kiln::DeviceError& e) {
    msg = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  CHECK(end == cudaSuccess);  // the capture was not invalidated
  if (graph) cudaGraphDestroy(graph);
  CHECK(msg.find("capturing a CUDA graph") != std::string::npos);
  CHECK(msg.find("before capturing") != std::string::npos);
  // After the capture, the same call decides and runs normally.
  data.poison_outputs();
  rt.op("reduce_sum")(data.device_args(), stream);
  stream.synchronize();
  CHECK(data.error() <= data.tolerance());
}

TEST_CASE("a memo hit on a new stream during capture needs its workspace reserved first") {
  kiln::Runtime rt = make_runtime(true);
  const kiln::OpSchema& schema = rt.registry().op("reduce_sum");
  const kiln::Problem p = schema.problem_from_dims(kiln::f32, {100003}, kGpu);
  kiln::ProblemData data(schema, p, kGpu, 4);
  kiln::OwnedStream first(kGpu), second(kGpu);
  rt.op("reduce_sum")(data.device_args(), first);  // decided; workspace on `first` only
  first.synchronize();
  const kiln::Decision* d = rt.dispatcher().find(rt.op("reduce_sum").problem(data.device_args()));
  REQUIRE(d != nullptr);
  if (d->workspace_bytes == 0) return;  // this variant needs none: nothing to reserve
  const auto s = static_cast<cudaStream_t>(second.get().handle());
  cuda_ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  std::string msg;
  try {
    rt.op("reduce_sum")(data.device_args(), second);
  } catch (const kiln::DeviceError& e) {
    msg = e.what();
  }
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  if (graph) cudaGraphDestroy(graph);
  CHECK(msg.find("reserve_workspace") != std::string::npos);
  // Reserved explicitly, the same capture works.
  rt.reserve_workspace(kGpu, second, d->workspace_bytes);
  cuda_ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  rt.op("reduce_sum")(data.device_args(), second);
  cuda_ok(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  data.poison_outputs();
  cuda_ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
  second.synchronize();
  CHECK(data.error() <= data.tolerance());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// run_variant promises op()'s validation: it skipped the pointer check, so a host pointer tagged
// cuda:0 went to the kernel, which faulted and ended the context.
TEST_CASE("run_variant refuses a host pointer tagged cuda:0 as op() does") {
  kiln::Runtime rt = make_runtime(false);
  const kiln::Variant* v = rt.registry().find_variant("add_streaming");
  REQUIRE(v != nullptr);
  const std::int64_t m = 17, n = 513;
  auto a = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  auto b = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  auto c = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  std::vector<float> host(static_cast<std::size_t>(m * n), 1.5f);
  kiln::TensorRef fake = b.ref();
  fake.data = host.data();  // host memory, tagged cuda:0
  const kiln::Config config = v->default_config(kiln::device_info(kGpu));
  std::string msg;
  try {
    rt.run_variant(*v, config, {a, fake, c});
  } catch (const kiln::DeviceError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("argument 'b'") != std::string::npos);
  CHECK(msg.find("host memory") != std::string::npos);
  // The context is healthy: the same variant on device memory runs.
  a.fill_bytes(0x3F);
  b.fill_bytes(0x3F);
  rt.run_variant(*v, config, {a, b, c});
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

TEST_CASE("op() refuses a host pointer tagged cuda:0 and the context survives") {
  kiln::Runtime rt = make_runtime(true);
  const std::int64_t m = 33, n = 1025;
  auto a = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  auto b = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  auto c = kiln::Buffer::alloc(kGpu, kiln::f32, {m, n});
  std::vector<float> host(static_cast<std::size_t>(m * n), 1.5f);
  kiln::TensorRef fake = b.ref();
  fake.data = host.data();  // host memory, tagged cuda:0
  std::string msg;
  try {
    rt.op("add")({a, fake, c});
  } catch (const kiln::DeviceError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("argument 'b'") != std::string::npos);
  CHECK(msg.find("host memory") != std::string::npos);
  // Pinned host memory is refused too (device or managed memory only).
  float* pinned = nullptr;
  cuda_ok(cudaMallocHost(&pinned, sizeof(float) * m * n), "cudaMallocHost");
  kiln::TensorRef pinned_ref = b.ref();
  pinned_ref.data = pinned;
  CHECK_THROWS_AS(rt.op("add")({a, b, pinned_ref}), kiln::DeviceError);
  cudaFreeHost(pinned);
  // Managed memory is accepted; and the context is healthy: a real add runs and is right.
  float* managed = nullptr;
  cuda_ok(cudaMallocManaged(&managed, sizeof(float) * m * n), "cudaMallocManaged");
  for (std::int64_t i = 0; i < m * n; ++i) managed[i] = float(i % 97) - 3.0f;
  kiln::TensorRef managed_ref = b.ref();
  managed_ref.data = managed;
  std::vector<float> av(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m * n; ++i) av[i] = 0.25f * float(i % 13);
  a.copy_from_host(av.data(), av.size() * sizeof(float));
  c.fill_bytes(0xFF);
  rt.op("add")({a, managed_ref, c});
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::vector<float> got = c.to_host<float>();
  int wrong = 0;
  for (std::int64_t i = 0; i < m * n; ++i)
    if (got[i] != av[i] + (float(i % 97) - 3.0f)) ++wrong;
  CHECK(wrong == 0);
  cudaFree(managed);
}
