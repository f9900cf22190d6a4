// Decisions stay valid while other threads use them: one thread tunes (writes the database and
// clears the memo) while others call op() on the host backend and check every result.  Built to
// be meaningful under ThreadSanitizer and AddressSanitizer (see docs/architecture.md, "Dispatch
// from evidence": decisions are never freed while the Dispatcher lives).
#include <kiln/kiln.hpp>
#include <kiln/tuner/tuner.hpp>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

// y = x + 1 on the host; two variants so the tuner has something to choose from.  No global
// state: every thread owns its buffers.
std::shared_ptr<kiln::OpSchema> inc_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "inc";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->make_problem = [s = s.get()](const kiln::Args& a, kiln::Problem& p) {
    if (auto st = kiln::expect_shape(*s, a, 1, a.tensor(0).shape); !st.ok()) return st;
    p.dtype = kiln::f32;
    p.n_dims = 1;
    p.dims[0] = a.tensor(0).numel();
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = [](const kiln::Args& a, const kiln::Problem& p) {
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = a.tensor(0).as<float>()[i] + 1.0f;
    return kiln::Status();
  };
  s->work = [](const kiln::Problem& p) { return 8.0 * double(p.dims[0]); };
  return s;
}

class IncVariant final : public kiln::Variant {
 public:
  IncVariant(std::string name, int priority)
      : Variant({std::move(name), "inc", kiln::DeviceKind::host, {kiln::f32}, priority, "test"},
                kiln::ParamSpace().param("unroll", {1, 2})) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"unroll", 1}}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config&, void*,
                      kiln::Stream) const override {
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = a.tensor(0).as<float>()[i] + 1.0f;
    return kiln::Status();
  }
};

kiln::Registry inc_registry() {
  kiln::Registry r;
  r.add_op(inc_schema());
  r.add_variant(std::make_shared<IncVariant>("inc_a", 10));
  r.add_variant(std::make_shared<IncVariant>("inc_b", 5));
  return r;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kiln_threads_" + std::to_string(std::random_device{}()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Calls op() on several sizes until `stop`, checking every result; returns the failures.
int call_until(kiln::Runtime& rt, const std::atomic<bool>& stop, int seed, std::atomic<long>& calls) {
  const std::int64_t sizes[] = {17, 64, 100, 256};
  std::vector<kiln::Buffer> xs, ys;
  for (std::int64_t n : sizes) {
    xs.push_back(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n}));
    ys.push_back(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n}));
    for (std::int64_t i = 0; i < n; ++i) xs.back().ref().as<float>()[i] = float(seed * 1000 + i);
  }
  auto op = rt.op("inc");
  int failures = 0;
  for (int round = 0; !stop.load() || round < 50; ++round) {
    const std::size_t j = static_cast<std::size_t>(round + seed) % xs.size();
    ys[j].fill_bytes(0xFF);
    op({xs[j], ys[j]});
    for (std::int64_t i = 0; i < sizes[j]; ++i)
      if (ys[j].ref().as<float>()[i] != float(seed * 1000 + i) + 1.0f) ++failures;
    // A decision held across another thread's clear_memo() stays readable.
    const kiln::Decision& d = rt.dispatcher().decide(op.problem({xs[j], ys[j]}), kiln::device_info(kiln::Device::host()));
    if (!d.variant || d.variant->op() != "inc" || !d.launch) ++failures;
    calls.fetch_add(1);
  }
  return failures;
}

}  // namespace

TEST_CASE("one thread writes the database and clears the memo while others call op()") {
  TempDir dir;
  kiln::Runtime rt(inc_registry(), kiln_test::offline_options((dir.path / "user.yaml").string()));
  const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::vector<int> failures(3, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) callers.emplace_back([&, t] { failures[t] = call_until(rt, stop, t + 1, calls); });
  for (int i = 0; i < 40; ++i) {
    kiln::TuningEntry e;
    e.variant = i % 2 ? "inc_a" : "inc_b";
    e.config = kiln::Config{{"unroll", 1 + i % 2}};
    e.median_us = 1.0 + i;
    const std::string key = "f32|n=" + std::to_string(i % 2 ? 64 : 100);
    rt.dispatcher().update_database([&] { rt.db().put(fp, "inc", key, e); });
    rt.dispatcher().clear_memo();
  }
  stop = true;
  for (auto& t : callers) t.join();
  CHECK(calls.load() >= 150);
  for (int f : failures) CHECK(f == 0);
  // The last entries are in effect after the memo was cleared.
  const auto p = rt.registry().op("inc").problem_from_dims(kiln::f32, {64}, kiln::Device::host());
  const kiln::Decision& d = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host()));
  CHECK(d.evidence == kiln::Decision::Evidence::exact_entry);
  CHECK(d.variant->name() == "inc_a");
}

TEST_CASE("Tuner::tune stores entries while other threads call op()") {
  TempDir dir;
  kiln::Runtime rt(inc_registry(), kiln_test::offline_options((dir.path / "user.yaml").string()));
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::vector<int> failures(2, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) callers.emplace_back([&, t] { failures[t] = call_until(rt, stop, t + 1, calls); });
  kiln::TuneOptions o;
  o.search.timing.runs = 3;
  o.search.timing.warmup = 1;
  o.search.retime_rounds = 1;
  kiln::Tuner tuner(rt);
  int stored = 0;
  for (std::int64_t n : {17, 64, 100, 256}) {
    const auto p = rt.registry().op("inc").problem_from_dims(kiln::f32, {n}, kiln::Device::host());
    stored += tuner.tune(p, o).stored ? 1 : 0;
  }
  stop = true;
  for (auto& t : callers) t.join();
  CHECK(stored == 4);
  for (int f : failures) CHECK(f == 0);
  const auto p = rt.registry().op("inc").problem_from_dims(kiln::f32, {256}, kiln::Device::host());
  CHECK(rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host())).evidence ==
        kiln::Decision::Evidence::exact_entry);
}
