// op()'s hot path (docs/architecture.md, "The hot path"): an Op reuses its last decision for a
// call with the same argument layout without validating again.  These tests check that nothing a
// full call would catch or decide differently slips through: the schema's pointer checks (an
// output overlapping an input), null pointers, another alignment class, a scalar that is part of
// the problem, a new database entry, and bad views.
#include <kiln/kiln.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

namespace {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("kiln_hot_path_" + std::to_string(std::random_device{}()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string user_db() const { return (path / "user.yaml").string(); }
};

// The last launch (threads may launch at once: guarded).
struct Runs {
  std::string variant;
  int count = 0;
  std::mutex mutex;
};
Runs& runs() {
  static Runs r;
  return r;
}

// shift: y = x + (mode ? 1 : -1), n elements.  `mode` is a scalar read into the problem (like
// gemm's allow_tf32), and y may not overlap x (a check on the pointers, like gemm's).
std::shared_ptr<kiln::OpSchema> shift_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "shift";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->scalars = {{"mode", 1.0}};
  s->dim_names = {"n", "mode"};
  s->mode_dims = {"mode"};
  s->dtypes = {kiln::f32};
  s->make_problem = [s = s.get()](const kiln::Args& a, kiln::Problem& p) {
    if (auto st = kiln::expect_dtype(*s, a, 0, kiln::f32); !st.ok()) return st;
    if (auto st = kiln::expect_rank(*s, a, 0, 1); !st.ok()) return st;
    if (auto st = kiln::expect_shape(*s, a, 1, a.tensor(0).shape); !st.ok()) return st;
    const auto x0 = reinterpret_cast<std::uintptr_t>(a.tensor(0).data);
    const auto y0 = reinterpret_cast<std::uintptr_t>(a.tensor(1).data);
    const auto bytes = static_cast<std::uintptr_t>(a.tensor(0).numel()) * 4;
    if (bytes && x0 < y0 + bytes && y0 < x0 + bytes)
      return kiln::Status::fail(kiln::ErrorKind::argument, "shift: y overlaps x");
    p.dtype = kiln::f32;
    p.n_dims = 2;
    p.dims[0] = a.tensor(0).numel();
    p.dims[1] = a.scalar(0) != 0.0 ? 1 : 0;
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  // The mode dim comes from scalar 0 (OpSchema: scalars_for must carry every mode dim; a hand-made
  // problem is checked through this round trip).
  s->scalars_for = [](const kiln::Problem& p, kiln::Args& args) { args.set_scalar(0, p.dims[1] ? 1.0 : 0.0); };
  s->reference = [](const kiln::Args&, const kiln::Problem&) { return kiln::Status(); };
  s->work = [](const kiln::Problem& p) { return 8.0 * static_cast<double>(p.dims[0]); };
  return s;
}

// shift_aligned needs 16-byte alignment (priority 10); shift_any runs anything (priority 5).
class ShiftVariant final : public kiln::Variant {
 public:
  ShiftVariant(std::string name, int priority, bool aligned_only)
      : Variant({std::move(name), "shift", kiln::DeviceKind::host, {kiln::f32}, priority, "test"},
                kiln::ParamSpace().param("unroll", {1, 2})),
        aligned_only_(aligned_only) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"unroll", 1}}; }
  kiln::Support supports(const kiln::Problem& p, const kiln::DeviceInfo&, const kiln::Config&) const override {
    if (aligned_only_ && p.align_bytes < 16) return kiln::Support::no("needs 16-byte alignment");
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config&, void*,
                      kiln::Stream) const override {
    if (aligned_only_ && reinterpret_cast<std::uintptr_t>(a.tensor(0).data) % 16 != 0)
      return kiln::Status::fail(kiln::ErrorKind::argument, name() + ": misaligned x reached the aligned variant");
    const float d = p.dims[1] ? 1.0f : -1.0f;
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = a.tensor(0).as<float>()[i] + d;
    std::lock_guard<std::mutex> lock(runs().mutex);
    runs().variant = name();
    ++runs().count;
    return kiln::Status();
  }

 private:
  bool aligned_only_;
};

kiln::Registry shift_registry() {
  kiln::Registry r;
  r.add_op(shift_schema());
  r.add_variant(std::make_shared<ShiftVariant>("shift_aligned", 10, true));
  r.add_variant(std::make_shared<ShiftVariant>("shift_any", 5, false));
  return r;
}

// Host memory with room for offsets; views into it.
struct Memory {
  std::vector<float> storage = std::vector<float>(256, 0.0f);
  float* aligned(std::size_t at) {
    auto p = reinterpret_cast<std::uintptr_t>(storage.data() + at);
    return reinterpret_cast<float*>((p + 15) / 16 * 16);
  }
};

kiln::TensorRef vec(float* data, std::int64_t n) { return kiln::TensorRef::vector(data, kiln::f32, n, kiln::Device::host()); }

void fill(float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f;
}

bool shifted(const float* x, const float* y, std::int64_t n, float d) {
  for (std::int64_t i = 0; i < n; ++i)
    if (y[i] != x[i] + d) return false;
  return true;
}

}  // namespace

TEST_CASE("hot path: repeated calls with new pointers run the bound decision and compute") {
  kiln::Runtime rt(shift_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("shift");
  Memory m;
  float* x = m.aligned(0);
  float* y = m.aligned(64);
  fill(x, 16);
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_aligned");
  CHECK(shifted(x, y, 16, 1.0f));
  float* x2 = m.aligned(128);
  float* y2 = m.aligned(192);
  fill(x2, 16);
  const int before = runs().count;
  for (int i = 0; i < 5; ++i) op({vec(x2, 16), vec(y2, 16)});  // same layout, other pointers
  CHECK(runs().count == before + 5);
  CHECK(runs().variant == "shift_aligned");
  CHECK(shifted(x2, y2, 16, 1.0f));
  CHECK(rt.dispatcher().memo_size() == 1);
  kiln::Op copy = op;  // a copy starts from the same bound decision
  copy({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_aligned");
}

TEST_CASE("hot path: the schema's pointer checks still run (overlap), and null pointers are refused") {
  kiln::Runtime rt(shift_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("shift");
  Memory m;
  float* x = m.aligned(0);
  fill(x, 16);
  op({vec(x, 16), vec(m.aligned(64), 16)});
  op({vec(x, 16), vec(m.aligned(64), 16)});
  // Same layout and alignment, but y is x: a full call refuses it, so the hot path must too.
  CHECK_THROWS_AS(op({vec(x, 16), vec(x, 16)}), kiln::ArgumentError);
  kiln::TensorRef null_y = vec(m.aligned(64), 16);
  null_y.data = nullptr;
  CHECK_THROWS_AS(op({vec(x, 16), null_y}), kiln::ArgumentError);
  // A bad view of another layout: the full validation names it.
  kiln::TensorRef bad = vec(x, 16);
  bad.shape.dims[0] = -3;
  CHECK_THROWS_AS(op({bad, vec(m.aligned(64), 16)}), kiln::ShapeError);
  // And the bound decision still works afterwards.
  op({vec(x, 16), vec(m.aligned(64), 16)});
  CHECK(shifted(x, m.aligned(64), 16, 1.0f));
}

TEST_CASE("hot path: another alignment class or a problem scalar decides again") {
  kiln::Runtime rt(shift_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("shift");
  Memory m;
  float* x = m.aligned(0);
  float* y = m.aligned(64);
  fill(x, 32);
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_aligned");
  // x one float further: the same shapes and strides, 4-byte alignment.
  op({vec(x + 1, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_any");
  CHECK(shifted(x + 1, y, 16, 1.0f));
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_aligned");
  // mode = 0 is another problem (and another result).
  op(kiln::Args({vec(x, 16), vec(y, 16)}, {0.0}));
  CHECK(shifted(x, y, 16, -1.0f));
  op(kiln::Args({vec(x, 16), vec(y, 16)}, {1.0}));  // the default, given explicitly
  CHECK(shifted(x, y, 16, 1.0f));
  op({vec(x, 16), vec(y, 16)});
  CHECK(shifted(x, y, 16, 1.0f));
  CHECK(rt.dispatcher().memo_size() == 3);  // aligned mode 1, misaligned mode 1, aligned mode 0
}

TEST_CASE("hot path: a database write (clear_memo) is seen by the next call") {
  TempDir dir;
  kiln::Runtime rt(shift_registry(), kiln_test::offline_options(dir.user_db()));
  kiln::Op op = rt.op("shift");
  Memory m;
  float* x = m.aligned(0);
  float* y = m.aligned(64);
  fill(x, 16);
  op({vec(x, 16), vec(y, 16)});
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_aligned");
  const std::uint64_t generation = rt.dispatcher().generation();
  kiln::TuningEntry e;
  e.variant = "shift_any";
  e.config = kiln::Config{{"unroll", 2}};
  e.median_us = 1.0;
  const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  rt.dispatcher().update_database([&] { rt.db().put(fp, "shift", "f32|n=16|mode=1", e); });
  CHECK(rt.dispatcher().generation() > generation);
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_any");
  op({vec(x, 16), vec(y, 16)});
  CHECK(runs().variant == "shift_any");
}

TEST_CASE("hot path: threads sharing one Op while the database changes") {
  TempDir dir;
  kiln::Runtime rt(shift_registry(), kiln_test::offline_options(dir.user_db()));
  kiln::Op op = rt.op("shift");
  const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  std::atomic<bool> stop{false};
  std::vector<int> failures(3, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      Memory m;
      float* x = m.aligned(0);
      float* y = m.aligned(64);
      fill(x, 16 + 4 * t);
      for (int round = 0; round < 2000 || !stop.load(); ++round) {
        const std::int64_t n = round % 7 == 0 ? 12 : 16 + 4 * t;  // mostly one layout, sometimes another
        op({vec(x, n), vec(y, n)});
        if (!shifted(x, y, n, 1.0f)) ++failures[t];
      }
    });
  for (int i = 0; i < 50; ++i) {
    kiln::TuningEntry e;
    e.variant = i % 2 ? "shift_any" : "shift_aligned";
    e.config = kiln::Config{{"unroll", 1 + i % 2}};
    e.median_us = 1.0 + i;
    rt.dispatcher().update_database([&] { rt.db().put(fp, "shift", "f32|n=16|mode=1", e); });
  }
  stop = true;
  for (auto& t : callers) t.join();
  for (int f : failures) CHECK(f == 0);
}
