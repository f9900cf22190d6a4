// Every dispatcher path: defaults in priority order, rejection reasons, the database (exact
// key, nearest bucket, device fallback, layers, stale and invalid entries), memoisation, and the
// errors op() raises for bad arguments.
#include <kiln/kiln.hpp>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "catch.hpp"
#include "scale_op.hpp"

namespace fs = std::filesystem;
using kiln_test::last_run;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_dispatch_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string entry_yaml(const std::string& device, const std::string& key, const std::string& variant,
                       const std::string& config, const std::string& build = "") {
  return "schema: 1\ndevices:\n  \"" + device + "\":\n    scale:\n      \"" + key + "\":\n        variant: " + variant +
         "\n        config: " + config +
         "\n        median_us: 10.0\n        mad_us: 0.5\n        samples: 20\n        throughput: 1.0\n"
         "        throughput_unit: GB/s\n        plugin: {name: scale, version: 0.1.0, build: \"" + build +
         "\"}\n        tuned_at: 2026-11-21T10:00:00Z\n";
}

const std::string& host_fp() {
  static const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  return fp;
}

// Runs scale on n host elements and checks the result.
void run_scale(kiln::Runtime& rt, std::int64_t n) {
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  for (std::int64_t i = 0; i < n; ++i) x.ref().as<float>()[i] = static_cast<float>(i) - 3.5f;
  y.fill_bytes(0xFF);
  rt.op("scale")({x, y});
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(y.ref().as<float>()[i] == 2.0f * (static_cast<float>(i) - 3.5f));
}

}  // namespace

TEST_CASE("defaults: the first variant in priority order that supports the problem") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  run_scale(rt, 8);
  CHECK(last_run().variant == "scale_even");
  run_scale(rt, 7);
  CHECK(last_run().variant == "scale_any");
  const auto& schema = rt.registry().op("scale");
  const kiln::Decision d = rt.explain(schema.problem_from_dims(kiln::f32, {7}, kiln::Device::host()));
  CHECK(d.from == kiln::Decision::From::defaults);
  REQUIRE(d.rejected.size() == 1);
  CHECK(d.rejected[0].first == "scale_even");
  CHECK(d.rejected[0].second == "n must be even");
  CHECK(d.explain().find("n must be even") != std::string::npos);
}

TEST_CASE("no supporting variant: the error lists every reason") {
  kiln::Registry r;
  r.add_op(kiln_test::scale_schema());
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_even", 10, true));
  kiln::Runtime rt(std::move(r), kiln_test::offline_options());
  try {
    run_scale(rt, 7);
    FAIL("expected NoVariantError");
  } catch (const kiln::NoVariantError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("scale_even: n must be even") != std::string::npos);
    CHECK(msg.find("f32|n=7") != std::string::npos);
  }
}

TEST_CASE("a hand-written database entry is honoured") {
  TempDir dir;
  const auto user = dir.file("user.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_any", "{unroll: 4}"));
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
  REQUIRE(rt.db().errors().empty());
  run_scale(rt, 8);
  CHECK(last_run().variant == "scale_any");
  CHECK(last_run().config == kiln::Config{{"unroll", 4}});
  const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {8}, kiln::Device::host()));
  CHECK(d.from == kiln::Decision::From::database);
  REQUIRE(d.hit);
  CHECK(d.hit->exact_problem);
  CHECK(d.hit->level == kiln::FallbackLevel::exact);
  CHECK(d.hit->layer_path == user);
}

TEST_CASE("an unseen shape uses the nearest tuned neighbour") {
  TempDir dir;
  const auto user = dir.file("user.yaml", entry_yaml(host_fp(), "f32|n=1000", "scale_any", "{unroll: 2}"));
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
  run_scale(rt, 1024);  // bucket n~1024, like 1000
  CHECK(last_run().variant == "scale_any");
  CHECK(last_run().config == kiln::Config{{"unroll", 2}});
  const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {1024}, kiln::Device::host()));
  REQUIRE(d.hit);
  CHECK_FALSE(d.hit->exact_problem);
  // Far beyond the neighbour radius: the nearest usable entry of the class still decides (a far
  // neighbour), and says how far it is.
  run_scale(rt, 100000);
  CHECK(last_run().variant == "scale_any");
  const auto far = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {100000}, kiln::Device::host()));
  CHECK(far.evidence == kiln::Decision::Evidence::far_neighbour);
  REQUIRE(far.hit);
  CHECK(far.hit->problem_key == "f32|n=1000");
  CHECK(far.distance == Approx(std::log2(100.0)));
}

TEST_CASE("device fallback levels") {
  TempDir dir;
  const auto user = dir.file("user.yaml", entry_yaml("Another CPU|host|999t", "f32|n=8", "scale_any", "{unroll: 4}"));
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
  const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {8}, kiln::Device::host()));
  REQUIRE(d.hit);
  CHECK(d.hit->level == kiln::FallbackLevel::arch);
  CHECK(d.hit->device_key == "Another CPU|host|999t");
  CHECK(d.variant->name() == "scale_any");
}

TEST_CASE("the user layer wins over the shipped one") {
  TempDir dir;
  const auto shipped = dir.file("shipped.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_even", "{unroll: 2}"));
  const auto user = dir.file("user.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_any", "{unroll: 1}"));
  kiln::Runtime both(kiln_test::scale_registry(), kiln_test::offline_options(user, {shipped}));
  run_scale(both, 8);
  CHECK(last_run().variant == "scale_any");
  kiln::Runtime shipped_only(kiln_test::scale_registry(), kiln_test::offline_options("", {shipped}));
  run_scale(shipped_only, 8);
  CHECK(last_run().variant == "scale_even");
  CHECK(last_run().config == kiln::Config{{"unroll", 2}});
}

TEST_CASE("stale, invalid and unsupported entries are skipped with a reason") {
  TempDir dir;
  kiln::Registry r;
  r.add_op(kiln_test::scale_schema());
  kiln::Source src{"scale", "0.1.0", "new-build", ""};
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_even", 10, true), src);
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_any", 5, false), src);

  SECTION("stale build id") {
    const auto user = dir.file("u.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_any", "{unroll: 4}", "old-build"));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
    const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {8}, kiln::Device::host()));
    CHECK(d.from == kiln::Decision::From::defaults);
    // The stale entry's variant still says what won; it runs at its default, not the old config.
    CHECK(d.evidence == kiln::Decision::Evidence::stale_neighbours);
    CHECK(d.variant->name() == "scale_any");
    CHECK_FALSE(d.config == kiln::Config{{"unroll", 4}});
    REQUIRE_FALSE(d.rejected.empty());
    CHECK(d.rejected[0].second.find("stale") != std::string::npos);
  }
  SECTION("current build id is used") {
    const auto user = dir.file("u.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_any", "{unroll: 4}", "new-build"));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
    run_scale(rt, 8);
    CHECK(last_run().variant == "scale_any");
  }
  SECTION("a config outside the space") {
    const auto user = dir.file("u.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_any", "{unroll: 3}"));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
    const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {8}, kiln::Device::host()));
    CHECK(d.from == kiln::Decision::From::defaults);
    REQUIRE_FALSE(d.rejected.empty());
    CHECK(d.rejected[0].second.find("unroll: 3 not in") != std::string::npos);
  }
  SECTION("a variant that does not support the problem") {
    const auto user = dir.file("u.yaml", entry_yaml(host_fp(), "f32|n=7", "scale_even", "{unroll: 1}"));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
    run_scale(rt, 7);
    CHECK(last_run().variant == "scale_any");
  }
  SECTION("a variant that is not loaded") {
    const auto user = dir.file("u.yaml", entry_yaml(host_fp(), "f32|n=8", "scale_gone", "{unroll: 1}"));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
    const auto d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {8}, kiln::Device::host()));
    REQUIRE_FALSE(d.rejected.empty());
    CHECK(d.rejected[0].second.find("not loaded") != std::string::npos);
  }
}

TEST_CASE("a corrupt database is reported and the runtime uses defaults") {
  TempDir dir;
  const std::string text = "schema: 1\ndevices: [unclosed\n";
  const auto user = dir.file("user.yaml", text);
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
  CHECK_FALSE(rt.db().errors().empty());
  run_scale(rt, 8);
  CHECK(last_run().variant == "scale_even");
  std::ifstream in(user);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(after == text);
}

TEST_CASE("decisions are memoised per problem") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  CHECK(rt.dispatcher().memo_size() == 0);
  run_scale(rt, 8);
  run_scale(rt, 8);
  CHECK(rt.dispatcher().memo_size() == 1);
  run_scale(rt, 9);
  CHECK(rt.dispatcher().memo_size() == 2);
  const auto& schema = rt.registry().op("scale");
  const auto p = schema.problem_from_dims(kiln::f32, {8}, kiln::Device::host());
  const kiln::Decision& a = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host()));
  const kiln::Decision& b = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host()));
  CHECK(&a == &b);
}

TEST_CASE("op() rejects bad arguments with errors that name them") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {8});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {8});
  auto y7 = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {7});
  auto yi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {8});
  auto op = rt.op("scale");
  REQUIRE_THROWS_AS(rt.op("gemm_nope"), kiln::UnknownOpError);
  REQUIRE_THROWS_AS(op({x}), kiln::ArgumentError);
  REQUIRE_THROWS_AS(op(kiln::Args({x, y}, {1.0, 2.0})), kiln::ArgumentError);
  REQUIRE_THROWS_AS(op({x, y7}), kiln::ShapeError);
  REQUIRE_THROWS_AS(op({x, yi}), kiln::DTypeError);
  kiln::TensorRef null_x = x.ref();
  null_x.data = nullptr;
  REQUIRE_THROWS_AS(op({null_x, y}), kiln::ArgumentError);
  kiln::TensorRef elsewhere = y.ref();
  elsewhere.device = kiln::Device::cuda(0);
  try {
    op({x, elsewhere});
    FAIL("expected DeviceError");
  } catch (const kiln::DeviceError& e) {
    CHECK(std::string(e.what()).find("argument 'y' is on cuda:0") != std::string::npos);
  }
  try {
    op({x, y7});
  } catch (const kiln::ShapeError& e) {
    CHECK(std::string(e.what()).find("'y'") != std::string::npos);
  }
  // A scalar changes the result.
  for (int i = 0; i < 8; ++i) x.ref().as<float>()[i] = 1.0f;
  op(kiln::Args({x, y}, {3.0}));
  CHECK(y.ref().as<float>()[5] == 3.0f);
}

TEST_CASE("a variant whose supports() throws is passed over with the reason, not thrown through op()") {
  // Variant methods must not throw; one that did made every op() of its op (and kiln explain)
  // fail with the plugin's exception, although other variants could run the problem.
  kiln::Registry r = kiln_test::scale_registry();
  r.add_variant(std::make_shared<kiln_test::ThrowingSupportsScale>());
  kiln::Runtime rt(std::move(r), kiln_test::offline_options());
  run_scale(rt, 7);
  CHECK(last_run().variant == "scale_any");
  const kiln::Decision d = rt.explain(rt.registry().op("scale").problem_from_dims(kiln::f32, {7}, kiln::Device::host()));
  bool named = false;
  for (const auto& [variant, why] : d.rejected) named |= variant == "scale_throws" && why == "supports() threw: supports exploded";
  CHECK(named);
}
