// Dispatch from evidence on a synthetic registry and database (host backend): exact entries, the
// nearest tuned neighbour within the radius (aspect ratio counts), mode dims never crossed, a
// same-width dtype's neighbours where the class has none near, the nearest usable entry past the
// radius (far neighbour), the calibrated cost model where no entry
// of the class is usable, the vendor fallback where there is no evidence, priorities only as
// tie-breakers, leave-one-out decisions, and what `kiln explain` prints about it.
#include <kiln/kiln.hpp>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

// "mm": C = A * B with a tf32 mode dim, like gemm; work = 2 m n k FLOP.
std::shared_ptr<kiln::OpSchema> mm_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "mm";
  s->tensors = {{"a", kiln::Role::input}, {"b", kiln::Role::input}, {"c", kiln::Role::output}};
  s->scalars = {{"allow_tf32", 0.0}};
  s->dim_names = {"m", "n", "k", "tf32"};
  s->dim_defaults = {{"tf32", 0}};
  s->mode_dims = {"tf32"};
  s->dtypes = {kiln::f32};
  s->work_unit = kiln::WorkUnit::flop;
  s->make_problem = [](const kiln::Args& a, kiln::Problem& p) {
    p.dtype = kiln::f32;
    p.n_dims = 4;
    p.dims[0] = a.tensor(0).rows();
    p.dims[1] = a.tensor(1).cols();
    p.dims[2] = a.tensor(0).cols();
    p.dims[3] = a.scalar(0) != 0.0 ? 1 : 0;
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::matrix(p.dims[0], p.dims[2])},
             {kiln::f32, kiln::Shape::matrix(p.dims[2], p.dims[1])},
             {kiln::f32, kiln::Shape::matrix(p.dims[0], p.dims[1])}};
    return kiln::Status();
  };
  s->scalars_for = [](const kiln::Problem& p, kiln::Args& args) {
    if (args.scalar_count() < 1) args.resize_scalars(1);
    args.set_scalar(0, double(p.dims[3]));
  };
  s->reference = [](const kiln::Args&, const kiln::Problem&) { return kiln::Status(); };
  s->work = [](const kiln::Problem& p) { return 2.0 * double(p.dims[0]) * double(p.dims[1]) * double(p.dims[2]); };
  return s;
}

std::string& ran() {
  static std::string name;
  return name;
}

// A host variant that records that it ran; `tf32_only` / `fp32_only` restrict the mode it serves.
class MmVariant final : public kiln::Variant {
 public:
  enum class Serves { both, tf32_only };
  MmVariant(std::string name, int priority, Serves serves = Serves::both, bool vendor = false)
      : Variant({std::move(name), "mm", kiln::DeviceKind::host, {kiln::f32}, priority, "test", false, vendor},
                kiln::ParamSpace().param("tile", {16, 32, 64})),
        serves_(serves) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"tile", 32}}; }
  kiln::Support supports(const kiln::Problem& p, const kiln::DeviceInfo&, const kiln::Config&) const override {
    if (serves_ == Serves::tf32_only && p.dims[3] != 1) return kiln::Support::no("rounds to TF32: needs tf32=1");
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*, kiln::Stream) const override {
    ran() = name();
    return kiln::Status();
  }

 private:
  Serves serves_;
};

kiln::Registry mm_registry(bool with_vendor = true) {
  kiln::Registry r;
  r.add_op(mm_schema());
  r.add_variant(std::make_shared<MmVariant>("mm_fp32", 50));
  r.add_variant(std::make_shared<MmVariant>("mm_tf32", 60, MmVariant::Serves::tf32_only));
  r.add_variant(std::make_shared<MmVariant>("mm_small", 40));
  if (with_vendor) r.add_variant(std::make_shared<MmVariant>("mm_vendor", 5, MmVariant::Serves::both, true));
  return r;
}

struct Entry {
  std::string device, key, variant;
  double median_us;
  int tile = 32;
  std::string alternatives = "";  // YAML flow list of "VARIANT CONFIG MEDIAN_US [BUILD]", or empty
};

struct TempDb {
  fs::path dir;
  TempDb() {
    dir = fs::temp_directory_path() / ("kiln_evidence_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
  }
  ~TempDb() { fs::remove_all(dir); }
  std::string write(const std::vector<Entry>& entries, const std::string& op = "mm") const {
    std::string y = "schema: 1\ndevices:\n";
    std::string last_dev;
    for (const Entry& e : entries) {
      if (e.device != last_dev) y += "  \"" + e.device + "\":\n    " + op + ":\n";
      last_dev = e.device;
      y += "      \"" + e.key + "\":\n        variant: " + e.variant + "\n        config: {tile: " +
           std::to_string(e.tile) + "}\n        median_us: " + std::to_string(e.median_us) + "\n";
      if (!e.alternatives.empty()) y += "        alternatives: " + e.alternatives + "\n";
    }
    const fs::path f = dir / "user.yaml";
    std::ofstream(f) << y;
    return f.string();
  }
};

const std::string& host_fp() {
  static const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  return fp;
}

std::string key(std::int64_t m, std::int64_t n, std::int64_t k, int tf32 = 0) {
  return "f32|m=" + std::to_string(m) + "|n=" + std::to_string(n) + "|k=" + std::to_string(k) + "|tf32=" +
         std::to_string(tf32);
}

kiln::Decision decide(kiln::Runtime& rt, std::int64_t m, std::int64_t n, std::int64_t k, int tf32 = 0) {
  const auto& s = rt.registry().op("mm");
  return rt.explain(s.problem_from_dims(kiln::f32, {m, n, k, tf32}, kiln::Device::host()));
}

// Time of a variant with overhead `a` us and `tflops` TFLOP/s on an m x n x k problem.
double model_time(double a, double tflops, double m, double n, double k) { return a + 2 * m * n * k / (tflops * 1e6); }

}  // namespace

TEST_CASE("evidence: the exact entry wins, a close neighbour is used and its distance reported") {
  TempDb db;
  const auto user = db.write({{host_fp(), key(1000, 1000, 1000), "mm_small", 10.0, 16}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  REQUIRE(rt.db().errors().empty());

  const kiln::Decision exact = decide(rt, 1000, 1000, 1000);
  CHECK(exact.evidence == kiln::Decision::Evidence::exact_entry);
  CHECK(exact.variant->name() == "mm_small");
  CHECK(exact.config == kiln::Config{{"tile", 16}});
  CHECK(kiln_test::contains(exact.explain(), "evidence: exact entry"));

  const kiln::Decision near = decide(rt, 1024, 1024, 1024);
  CHECK(near.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(near.from == kiln::Decision::From::database);
  CHECK(near.variant->name() == "mm_small");
  CHECK(near.config == kiln::Config{{"tile", 16}});
  CHECK(near.distance == Approx(std::sqrt(3.0) * std::log2(1.024)));
  REQUIRE(near.hit);
  CHECK_FALSE(near.hit->exact_problem);
  CHECK(near.hit->problem_key == key(1000, 1000, 1000));
  CHECK(kiln_test::contains(near.explain(), "evidence: tuned neighbour, distance 0.059"));

  // op() runs what explain says.
  auto a = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1024, 1024});
  auto b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1024, 1024});
  auto c = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1024, 1024});
  rt.op("mm")({a, b, c});
  CHECK(ran() == "mm_small");
}

TEST_CASE("evidence: distance is over log(m), log(n), log(k): aspect ratio counts, not only size") {
  TempDb db;
  const auto user = db.write({{host_fp(), key(4096, 64, 256), "mm_small", 10.0},
                              {host_fp(), key(64, 4096, 256), "mm_fp32", 10.0}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  // Same m*n*k as both entries; only the shape tells them apart.
  CHECK(decide(rt, 4000, 70, 256).variant->name() == "mm_small");
  CHECK(decide(rt, 70, 4000, 256).variant->name() == "mm_fp32");
}

TEST_CASE("evidence: mode dims are never crossed (a tf32=0 entry never serves tf32=1)") {
  TempDb db;
  // fp32 entries at and around 2048^3, the same sizes a tf32=1 caller asks for.
  const auto user = db.write({{host_fp(), key(2048, 2048, 2048, 0), "mm_fp32", 100.0},
                              {host_fp(), key(2000, 2048, 2048, 0), "mm_fp32", 98.0},
                              {host_fp(), key(4096, 4096, 4096, 0), "mm_fp32", 800.0}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::OpSchema& s = rt.registry().op("mm");

  const kiln::Decision fp32 = decide(rt, 2048, 2048, 2048, 0);
  CHECK(fp32.evidence == kiln::Decision::Evidence::exact_entry);

  for (auto [m, n, k] : {std::array<std::int64_t, 3>{2048, 2048, 2048}, {2000, 2048, 2048}, {3000, 3000, 3000}}) {
    const kiln::Decision d = decide(rt, m, n, k, 1);
    INFO(d.explain());
    // No entry of the tf32=1 class exists: no exact entry, no neighbour, no model; the vendor.
    CHECK(d.evidence == kiln::Decision::Evidence::vendor_fallback);
    CHECK(d.variant->name() == "mm_vendor");
    CHECK_FALSE(d.hit);
    CHECK(d.estimates.empty());
  }
  // The bucket rule keeps modes exact too: no "tf32~1" rounding.
  const auto p1 = s.problem_from_dims(kiln::f32, {2048, 2048, 2048, 1}, kiln::Device::host());
  CHECK(s.bucket_of(p1) == "f32|m~2048|n~2048|k~2048|tf32=1");
  CHECK(s.mode_key(p1) == "f32|tf32=1");

  SECTION("with tf32=1 evidence far away, the far neighbour comes from the tf32=1 class") {
    TempDb db2;
    const auto user2 = db2.write({{host_fp(), key(2048, 2048, 2048, 0), "mm_fp32", 100.0},
                                  {host_fp(), key(64, 64, 64, 1), "mm_tf32", 3.0},
                                  {host_fp(), key(128, 128, 128, 1), "mm_tf32", 4.0}});
    kiln::Runtime rt2(mm_registry(), kiln_test::offline_options(user2));
    const kiln::Decision d = decide(rt2, 2048, 2048, 2048, 1);
    INFO(d.explain());
    // The tf32=0 entry at distance 0 is not evidence; the tf32=1 one at distance 4 sqrt(3) is.
    CHECK(d.evidence == kiln::Decision::Evidence::far_neighbour);
    CHECK(d.variant->name() == "mm_tf32");
    REQUIRE(d.hit);
    CHECK(d.hit->problem_key == key(128, 128, 128, 1));
    CHECK(d.distance == Approx(4 * std::sqrt(3.0)));
  }
  SECTION("with tf32=1 entries that cannot run, the model uses only the tf32=1 class") {
    TempDb db2;
    const auto user2 = db2.write({{host_fp(), key(2048, 2048, 2048, 0), "mm_fp32", 100.0},
                                  {host_fp(), key(64, 64, 64, 1), "mm_tf32", 3.0, 48},
                                  {host_fp(), key(128, 128, 128, 1), "mm_tf32", 4.0, 48}});
    kiln::Runtime rt2(mm_registry(), kiln_test::offline_options(user2));
    const kiln::Decision d = decide(rt2, 2048, 2048, 2048, 1);
    INFO(d.explain());
    CHECK(d.evidence == kiln::Decision::Evidence::model);
    CHECK(d.variant->name() == "mm_tf32");
    REQUIRE(d.estimates.size() == 1);  // mm_fp32's tf32=0 entry is not evidence for tf32=1
    CHECK(d.estimates[0].first == "mm_tf32");
  }
}

TEST_CASE("evidence: past the radius the nearest usable entry decides, not the model") {
  TempDb db;
  // mm_fp32 won the big squares (20 us overhead, 10 TFLOP/s), mm_small the single rows (slow per
  // FLOP).  For one row of 2^20 the model, which knows only each winner's rate, would pick
  // mm_fp32; the nearest single row says mm_small (like add on 1 x 2^28, docs/performance.md).
  std::vector<Entry> entries;
  for (std::int64_t s : {1024, 2048})
    entries.push_back({host_fp(), key(s, s, s), "mm_fp32", model_time(20, 10, double(s), double(s), double(s))});
  entries.push_back({host_fp(), key(1, 1024, 1), "mm_small", 5.0});
  entries.push_back({host_fp(), key(1, 2048, 1), "mm_small", 6.0});
  const auto user = db.write(entries);
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1, 1 << 20, 1);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::far_neighbour);
  CHECK(d.from == kiln::Decision::From::database);
  CHECK(d.variant->name() == "mm_small");
  REQUIRE(d.hit);
  CHECK(d.hit->problem_key == key(1, 2048, 1));
  CHECK(d.distance == Approx(9.0));
  CHECK(d.estimates.empty());
  CHECK(kiln_test::contains(d.explain(), "evidence: far neighbour (nearest usable entry past the radius), distance 9.000"));
  // Within the radius the neighbour rule still applies.
  CHECK(decide(rt, 1, 1500, 1).evidence == kiln::Decision::Evidence::neighbour);

  SECTION("a far entry whose config does not fit is skipped for the next nearest") {
    TempDb db2;
    const auto user2 = db2.write({{host_fp(), key(1, 2048, 1), "mm_small", 6.0, 48},
                                  {host_fp(), key(2048, 2048, 2048), "mm_fp32", 900.0}});
    kiln::Runtime rt2(mm_registry(), kiln_test::offline_options(user2));
    const kiln::Decision f = decide(rt2, 1, 1 << 20, 1);
    INFO(f.explain());
    CHECK(f.evidence == kiln::Decision::Evidence::far_neighbour);
    CHECK(f.variant->name() == "mm_fp32");
    REQUIRE_FALSE(f.rejected.empty());
    CHECK(kiln_test::contains(f.rejected[0].first, "far neighbour " + key(1, 2048, 1)));
  }
}

TEST_CASE("evidence: leave-one-out decides as if the entry were not there") {
  TempDb db;
  const auto user = db.write({{host_fp(), key(1000, 1000, 1000), "mm_small", 10.0},
                              {host_fp(), key(1100, 1000, 1000), "mm_fp32", 11.0},
                              {host_fp(), key(1000, 1000, 1000, 1), "mm_unloaded", 9.0}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const auto& s = rt.registry().op("mm");
  const auto p = s.problem_from_dims(kiln::f32, {1000, 1000, 1000, 0}, kiln::Device::host());
  const auto& dev = kiln::device_info(kiln::Device::host());
  CHECK(rt.dispatcher().decide_uncached(p, dev).variant->name() == "mm_small");
  const kiln::Decision loo = rt.dispatcher().decide_uncached(p, dev, {key(1000, 1000, 1000), false});
  CHECK(loo.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(loo.variant->name() == "mm_fp32");
  REQUIRE(loo.hit);
  CHECK(loo.hit->problem_key == key(1100, 1000, 1000));

  // An entry of a variant not loaded here (a GPU database on a host): skipped unless entries are trusted.
  const auto p1 = s.problem_from_dims(kiln::f32, {1000, 1000, 1000, 1}, kiln::Device::host());
  const kiln::Decision strict = rt.dispatcher().decide_uncached(p1, dev, {"none", false});
  CHECK(strict.evidence == kiln::Decision::Evidence::vendor_fallback);
  const kiln::Decision trusted = rt.dispatcher().decide_uncached(p1, dev, {"none", true});
  CHECK(trusted.evidence == kiln::Decision::Evidence::exact_entry);
  CHECK(trusted.variant == nullptr);
  REQUIRE(trusted.hit);
  CHECK(trusted.hit->entry.variant == "mm_unloaded");
  CHECK(kiln_test::contains(trusted.explain(), "mm_unloaded (not loaded)"));
}

TEST_CASE("evidence: when no entry of the class can run, the calibrated model decides") {
  TempDb db;
  // mm_small: 2 us overhead, 1 TFLOP/s; mm_fp32: 20 us overhead, 10 TFLOP/s.  Entries at sizes
  // where each won, with a tile (48) outside the space: no entry is usable, so neither a neighbour
  // nor a far neighbour decides; the fits still calibrate, with each variant's default config.
  std::vector<Entry> entries;
  for (std::int64_t s : {32, 64})
    entries.push_back({host_fp(), key(s, s, s), "mm_small", model_time(2, 1, double(s), double(s), double(s)), 48});
  for (std::int64_t s : {1024, 2048})
    entries.push_back({host_fp(), key(s, s, s), "mm_fp32", model_time(20, 10, double(s), double(s), double(s)), 48});
  const auto user = db.write(entries);
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));

  const kiln::Decision big = decide(rt, 65536, 65536, 65536);
  INFO(big.explain());
  CHECK(big.evidence == kiln::Decision::Evidence::model);
  CHECK(big.from == kiln::Decision::From::defaults);
  CHECK(big.variant->name() == "mm_fp32");
  CHECK(big.predicted_us == Approx(model_time(20, 10, 65536, 65536, 65536)).epsilon(1e-6));
  REQUIRE(big.estimates.size() == 2);
  CHECK(kiln_test::contains(big.explain(), "evidence: model estimate, predicted"));

  const kiln::Decision tiny = decide(rt, 1, 1, 1);
  INFO(tiny.explain());
  CHECK(tiny.evidence == kiln::Decision::Evidence::model);
  CHECK(tiny.variant->name() == "mm_small");
  CHECK(tiny.predicted_us == Approx(model_time(2, 1, 1, 1, 1)).epsilon(1e-6));

  // Between them: 2 + 2*s^3/1e6 vs 20 + 2*s^3/1e7 cross at s ~ 216.
  CHECK(decide(rt, 150, 150, 150).variant->name() == "mm_small");   // 8.75 vs 20.7 us
  CHECK(decide(rt, 400, 400, 400).variant->name() == "mm_fp32");    // 130 vs 32.8 us
}

TEST_CASE("evidence: stale entries give no config and no model, only which variants won") {
  TempDb db;
  auto registry = [] {
    kiln::Registry r;
    r.add_op(mm_schema());
    const kiln::Source src{"mm", "0.1.0", "build-2", ""};
    r.add_variant(std::make_shared<MmVariant>("mm_fp32", 50), src);
    r.add_variant(std::make_shared<MmVariant>("mm_small", 40), src);
    r.add_variant(std::make_shared<MmVariant>("mm_vendor", 5, MmVariant::Serves::both, true), src);
    return r;
  };
  // Tuned with build-1: mm_small won at 64^3 with tile 16, mm_fp32 and the vendor behind it.
  const fs::path f = db.dir / "stale.yaml";
  std::ofstream(f) << "schema: 1\ndevices:\n  \"" + host_fp() + "\":\n    mm:\n      \"" + key(64, 64, 64) +
                          "\":\n        variant: mm_small\n        config: {tile: 16}\n        median_us: 5\n"
                          "        plugin: {name: mm, version: 0.1.0, build: build-1}\n"
                          "        alternatives:\n          - mm_fp32 tile=64 9\n"
                          "          - mm_vendor tile=16 40\n";
  kiln::Runtime rt(registry(), kiln_test::offline_options(f.string()));
  const kiln::Decision d = decide(rt, 64, 64, 64);
  INFO(d.explain());
  // Not the exact entry, not a neighbour, not the model: its build is not the loaded one.
  CHECK(d.evidence == kiln::Decision::Evidence::stale_neighbours);
  CHECK(d.from == kiln::Decision::From::defaults);
  REQUIRE_FALSE(d.rejected.empty());
  CHECK(kiln_test::contains(d.rejected[0].second, "stale"));
  // Its winner's variant, at the variant's default (the stored tile 16 belongs to build-1).
  CHECK(d.variant->name() == "mm_small");
  CHECK(d.config == kiln::Config{{"tile", 32}});
  REQUIRE(d.weighed.size() == 3);
  CHECK(d.weighed.back().first == "mm_vendor");
  CHECK(kiln_test::contains(d.explain(), "stale neighbours' variants at their defaults"));
  // A current entry past the radius does not outrank stale ones within it (sixth session: far
  // vendor-won entries ran held-out histograms up to 10.6x slower than the stale entries' variants).
  std::ofstream(f, std::ios::app) << "      \"" + key(4096, 4096, 4096) +
                                         "\":\n        variant: mm_fp32\n        config: {tile: 64}\n        median_us: 900\n"
                                         "        plugin: {name: mm, version: 0.1.0, build: build-2}\n";
  kiln::Runtime rt2(registry(), kiln_test::offline_options(f.string()));
  const kiln::Decision near_stale = decide(rt2, 64, 64, 64);
  INFO(near_stale.explain());
  CHECK(near_stale.evidence == kiln::Decision::Evidence::stale_neighbours);
  CHECK(near_stale.variant->name() == "mm_small");
  // Where no stale entry is within the radius, the far current entry decides.
  const kiln::Decision far = decide(rt2, 1024, 1024, 1024);  // 6.9 from the stale entry, 3.5 from 4096^3
  INFO(far.explain());
  CHECK(far.evidence == kiln::Decision::Evidence::far_neighbour);
  CHECK(far.variant->name() == "mm_fp32");
  // A current entry within the radius outranks stale ones, nearer or not.
  std::ofstream(f, std::ios::app) << "      \"" + key(128, 128, 128) +
                                         "\":\n        variant: mm_fp32\n        config: {tile: 64}\n        median_us: 80\n"
                                         "        plugin: {name: mm, version: 0.1.0, build: build-2}\n";
  kiln::Runtime rt3(registry(), kiln_test::offline_options(f.string()));
  const kiln::Decision current = decide(rt3, 64, 64, 64);
  INFO(current.explain());
  CHECK(current.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(current.variant->name() == "mm_fp32");
}

TEST_CASE("evidence: no evidence at all means the vendor variant, priority only without one") {
  kiln::Runtime with_vendor(mm_registry(true), kiln_test::offline_options());
  const kiln::Decision v = decide(with_vendor, 512, 512, 512);
  CHECK(v.evidence == kiln::Decision::Evidence::vendor_fallback);
  CHECK(v.variant->name() == "mm_vendor");  // the lowest priority, still chosen
  CHECK(kiln_test::contains(v.explain(), "vendor fallback"));

  kiln::Runtime without(mm_registry(false), kiln_test::offline_options());
  const kiln::Decision p = decide(without, 512, 512, 512);
  CHECK(p.evidence == kiln::Decision::Evidence::priority);
  CHECK(p.variant->name() == "mm_fp32");
  const kiln::Decision t = decide(without, 512, 512, 512, 1);
  CHECK(t.variant->name() == "mm_tf32");  // priority 60 and serves tf32=1
}

TEST_CASE("evidence: an entry whose key has a negative size is no problem's and no evidence") {
  // A hand-edited key with m=-100 was read as m = 1 (log2 of a size below 1 is 0) and decided a
  // problem as its far neighbour.
  TempDb db;
  const auto user = db.write({{host_fp(), key(-100, 64, 64), "mm_small", 5.0}});
  kiln::Runtime rt(mm_registry(false), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 512, 512, 512);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::priority);
  CHECK(d.variant->name() == "mm_fp32");
}

TEST_CASE("evidence: equal model estimates are broken by priority") {
  TempDb db;
  // Both variants exactly 1 TFLOP/s with no overhead, measured at different sizes (with configs
  // that cannot run, so that the model decides).
  const auto user = db.write({{host_fp(), key(64, 64, 64), "mm_small", model_time(0, 1, 64, 64, 64), 48},
                              {host_fp(), key(256, 256, 256), "mm_fp32", model_time(0, 1, 256, 256, 256), 48}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 4096, 4096, 4096);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::model);
  REQUIRE(d.estimates.size() == 2);
  CHECK(d.estimates[0].second == Approx(d.estimates[1].second));
  CHECK(d.variant->name() == "mm_fp32");  // priority 50 > mm_small's 40
}

TEST_CASE("evidence: neighbours follow the device fallback levels") {
  TempDb db;
  // A neighbour on another host CPU (level arch) and none on this one: it is used, and says so.
  const auto user = db.write({{"Another CPU|host|999t", key(1000, 1000, 1000), "mm_small", 10.0}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1024, 1024, 1024);
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour);
  REQUIRE(d.hit);
  CHECK(d.hit->level == kiln::FallbackLevel::arch);
  CHECK(d.hit->device_key == "Another CPU|host|999t");
}

TEST_CASE("evidence: neighbours are weighed by every variant's time, not only by who won") {
  TempDb db;
  // The nearest entry's winner, mm_small, beat mm_fp32 by 2% there; at the two entries around it
  // mm_small ran 3x and 2.5x slower than mm_fp32.  The variant expected to lose least is mm_fp32,
  // at the config the nearest entry timed it with.
  const auto user = db.write(
      {{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 16, "[\"mm_fp32 tile=64 10.2\"]"},
       {host_fp(), key(2048, 1024, 1024), "mm_fp32", 20.0, 32, "[\"mm_small tile=16 60\"]"},
       {host_fp(), key(512, 1024, 1024), "mm_fp32", 5.0, 32, "[\"mm_small tile=16 12.5\"]"}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1100, 1024, 1024);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(d.variant->name() == "mm_fp32");
  CHECK(d.config == kiln::Config{{"tile", 64}});
  REQUIRE(d.hit);
  CHECK(d.hit->problem_key == key(1024, 1024, 1024));
  CHECK(d.hit->alternative_of == "mm_small");
  CHECK(d.hit->entry.median_us == Approx(10.2));
  CHECK(d.weighed_neighbours == 3);
  REQUIRE(d.weighed.size() == 2);
  CHECK(d.weighed[0].first == "mm_fp32");
  CHECK(d.weighed[0].second < d.weighed[1].second);
  CHECK(d.weighed[1].first == "mm_small");
  CHECK(d.weighed[1].second > 1.5);
  CHECK(kiln_test::contains(d.explain(), "neighbours weighed: 3"));
  CHECK(kiln_test::contains(d.explain(), "its winner there was mm_small"));

  // Right next to the 1024 entry, where mm_fp32 lost by 2%, with mm_small 1% behind at a farther
  // entry: the near entry's winner runs (weights fall with distance).  A variant no neighbour
  // timed (mm_vendor) is never weighed in.
  TempDb db2;
  const auto user2 = db2.write(
      {{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 16, "[\"mm_fp32 tile=64 10.2\"]"},
       {host_fp(), key(4096, 1024, 1024), "mm_fp32", 20.0, 32, "[\"mm_small tile=16 20.2\"]"}});
  kiln::Runtime rt2(mm_registry(), kiln_test::offline_options(user2));
  const kiln::Decision near = decide(rt2, 1025, 1024, 1024);
  INFO(near.explain());
  CHECK(near.variant->name() == "mm_small");
  CHECK(near.config == kiln::Config{{"tile", 16}});
  CHECK(near.hit->alternative_of.empty());
  for (const auto& [name, ratio] : near.weighed) CHECK(name != "mm_vendor");
}

TEST_CASE("evidence: among equally near neighbours the variant runs at the config of one where it won") {
  TempDb db;
  // 2047 is as near to 1024 as to 4096 (log2 distances 0.9993 and 1.0007, both 4 factors of two
  // apart).  mm_fp32 is expected fastest; the 1024 entry timed it as an alternative (tile 64, its
  // best in a short search), the 4096 entry as its winner (tile 16, re-timed against the others).
  const auto user = db.write(
      {{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 32, "[\"mm_fp32 tile=64 10.1\"]"},
       {host_fp(), key(4096, 1024, 1024), "mm_fp32", 40.0, 16, "[\"mm_small tile=16 80\"]"}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision tie = decide(rt, 2047, 1024, 1024);
  INFO(tie.explain());
  CHECK(tie.variant->name() == "mm_fp32");
  CHECK(tie.config == kiln::Config{{"tile", 16}});
  REQUIRE(tie.hit);
  CHECK(tie.hit->problem_key == key(4096, 1024, 1024));
  CHECK(tie.hit->alternative_of.empty());
  // Nearer to the 1024 entry (0.55 against 1.45): its alternative's config, as before.
  const kiln::Decision near = decide(rt, 1500, 1024, 1024);
  INFO(near.explain());
  CHECK(near.variant->name() == "mm_fp32");
  CHECK(near.config == kiln::Config{{"tile", 64}});
  REQUIRE(near.hit);
  CHECK(near.hit->alternative_of == "mm_small");
}

TEST_CASE("evidence: a trend across the neighbours is followed past them, not averaged") {
  TempDb db;
  // Along m, mm_small falls behind mm_fp32: it wins at 256 and 512, loses by 10% at 1024.  At
  // m = 2048 the weighted mean of the ratios still favours mm_small (1.045 against 1.059); the
  // fitted trend puts it at its worst measured ratio (1.1) and mm_fp32 at its best (1.0).
  const auto user = db.write(
      {{host_fp(), key(256, 1024, 1024), "mm_small", 10.0, 16, "[\"mm_fp32 tile=64 12\"]"},
       {host_fp(), key(512, 1024, 1024), "mm_small", 20.0, 16, "[\"mm_fp32 tile=64 21\"]"},
       {host_fp(), key(1024, 1024, 1024), "mm_fp32", 40.0, 64, "[\"mm_small tile=16 44\"]"}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 2048, 1024, 1024);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(d.variant->name() == "mm_fp32");
  REQUIRE(d.weighed.size() == 2);
  CHECK(d.weighed[0].second == Approx(1.0));
  CHECK(d.weighed[1].first == "mm_small");
  CHECK(d.weighed[1].second > 1.06);  // the mean says 1.045; the ridge keeps the slope short of 1.1
  // Between the neighbours the fit interpolates: at m = 362 (between 256 and 512, where mm_small
  // won both) mm_small runs.
  const kiln::Decision between = decide(rt, 362, 1024, 1024);
  INFO(between.explain());
  CHECK(between.variant->name() == "mm_small");
  REQUIRE(between.weighed.size() == 2);
  CHECK(between.weighed[0].second == Approx(1.0).margin(0.02));
}

TEST_CASE("evidence: an alternative timed with another build of its plugin is not weighed") {
  TempDb db;
  kiln::Registry r;
  r.add_op(mm_schema());
  r.add_variant(std::make_shared<MmVariant>("mm_fp32", 50), kiln::Source{"mm", "0.1.0", "build-2", ""});
  r.add_variant(std::make_shared<MmVariant>("mm_small", 40), kiln::Source{"mm_extra", "0.1.0", "x-2", ""});
  // Current entries (mm's build-2) won by mm_fp32; mm_small, from another plugin, was timed twice
  // as fast at both -- by that plugin's old build x-1, so those times are no evidence.
  const std::string alt = "[\"mm_small tile=16 5 x-1\"]";
  const auto user = db.write({{host_fp(), key(512, 1024, 1024), "mm_fp32", 10.0, 32, alt},
                              {host_fp(), key(2048, 1024, 1024), "mm_fp32", 10.0, 32, alt}});
  {
    std::ifstream in(user);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t at = 0;
    while ((at = text.find("median_us: 10.000000\n", at)) != std::string::npos) {
      at += std::string("median_us: 10.000000\n").size();
      text.insert(at, "        plugin: {name: mm, version: 0.1.0, build: build-2}\n");
    }
    std::ofstream(user) << text;
  }
  kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1024, 1024, 1024);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(d.variant->name() == "mm_fp32");
  REQUIRE(d.weighed.size() == 1);
  CHECK(d.weighed[0].first == "mm_fp32");
}

TEST_CASE("evidence: an entry without alternatives votes only when no neighbour compares variants") {
  TempDb db;
  // Two entries as old databases hold them (winners only): mm_small won the nearer one.  A
  // farther entry timed both, mm_small 5% behind: only it compares, so it decides.
  const auto user = db.write({{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 16},
                              {host_fp(), key(2048, 1024, 1024), "mm_small", 40.0, 16},
                              {host_fp(), key(256, 1024, 1024), "mm_fp32", 20.0, 32,
                               "[\"mm_small tile=16 21\"]"}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1024, 1024, 1023);
  INFO(d.explain());
  CHECK(d.variant->name() == "mm_fp32");
  CHECK(d.weighed_neighbours == 3);
  REQUIRE(d.weighed.size() == 2);
  CHECK(d.weighed[1].first == "mm_small");
  CHECK(d.weighed[1].second == Approx(1.05));

  // With no entry that compares, the winners-only entries vote: the nearer winner runs.
  TempDb db2;
  const auto user2 = db2.write({{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 16},
                                {host_fp(), key(4096, 1024, 1024), "mm_fp32", 40.0, 32}});
  kiln::Runtime rt2(mm_registry(), kiln_test::offline_options(user2));
  const kiln::Decision d2 = decide(rt2, 1100, 1024, 1024);
  INFO(d2.explain());
  CHECK(d2.variant->name() == "mm_small");
  REQUIRE(d2.weighed.size() == 2);
  CHECK(d2.weighed[1].first == "mm_fp32");
  CHECK(d2.weighed[1].second > 1.0);
}

TEST_CASE("evidence: a neighbour whose config does not fit is skipped for the next nearest") {
  TempDb db;
  // Both neighbours chose mm_small; the nearest names tile 48, outside the space: rejected with a
  // reason, and the config comes from the next nearest that timed mm_small.
  const auto user = db.write({{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 48},
                              {host_fp(), key(1200, 1024, 1024), "mm_small", 12.0, 16}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 1024, 1024, 1000);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(d.variant->name() == "mm_small");
  CHECK(d.config == kiln::Config{{"tile", 16}});
  REQUIRE(d.hit);
  CHECK(d.hit->problem_key == key(1200, 1024, 1024));
  REQUIRE_FALSE(d.rejected.empty());
  CHECK(kiln_test::contains(d.rejected[0].first, "neighbour " + key(1024, 1024, 1024)));
}

TEST_CASE("evidence: a vendor variant's config is the neighbour's only within kVendorConfigRadius") {
  // A vendor config names one of the library's choices for the tuned shape (cuBLASLt's algo index
  // into its heuristic's list for that shape); for another shape the library's own choice runs.
  TempDb db;
  const auto user = db.write({{host_fp(), key(1024, 1024, 1024), "mm_vendor", 10.0, 64},
                              {host_fp(), key(64, 64, 64), "mm_small", 1.0, 16}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision close = decide(rt, 1050, 1024, 1024);  // distance 0.04
  INFO(close.explain());
  CHECK(close.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(close.variant->name() == "mm_vendor");
  CHECK(close.config == kiln::Config{{"tile", 64}});
  CHECK(close.config_note.empty());
  const kiln::Decision near = decide(rt, 1100, 1000, 1000);  // distance 0.15: another shape already
  INFO(near.explain());
  CHECK(near.variant->name() == "mm_vendor");
  CHECK(near.config == kiln::Config{{"tile", 32}});
  const kiln::Decision far = decide(rt, 2048, 1024, 1024);  // distance 1
  INFO(far.explain());
  CHECK(far.evidence == kiln::Decision::Evidence::neighbour);
  CHECK(far.variant->name() == "mm_vendor");
  CHECK(far.config == kiln::Config{{"tile", 32}});  // its default: the library's heuristic
  CHECK(kiln_test::contains(far.explain(), "the library's own choice for this problem"));
  // kiln's own variants keep the neighbour's config at any distance.
  const kiln::Decision own = decide(rt, 128, 64, 64);
  CHECK(own.variant->name() == "mm_small");
  CHECK(own.config == kiln::Config{{"tile", 16}});
}

TEST_CASE("evidence: when no neighbour's config fits, the nearest neighbour's variant runs at its default") {
  TempDb db;
  // mm_small won next door with a config this build does not have (tile 48); a far entry says mm_fp32.
  const auto user = db.write({{host_fp(), key(1024, 1024, 1024), "mm_small", 10.0, 48},
                              {host_fp(), key(1, 1, 1), "mm_fp32", 1.0, 16}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = decide(rt, 2048, 1024, 1024);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::neighbour_variant);
  CHECK(d.from == kiln::Decision::From::database);
  CHECK(d.variant->name() == "mm_small");
  CHECK(d.config == kiln::Config{{"tile", 32}});
  REQUIRE(d.hit);
  CHECK(d.hit->problem_key == key(1024, 1024, 1024));
  CHECK(d.distance == Approx(1.0));
  CHECK(kiln_test::contains(d.explain(), "tuned neighbour's variant at its default config, distance 1.000"));
  // Past the radius the rule does not apply: the nearest usable far entry decides (mm_small's
  // entry is nearer, at 17.3, but does not fit).
  const kiln::Decision far = decide(rt, 1 << 20, 1, 1);
  INFO(far.explain());
  CHECK(far.evidence == kiln::Decision::Evidence::far_neighbour);
  CHECK(far.variant->name() == "mm_fp32");
}

TEST_CASE("evidence: among equally near entries the one that divides like the problem decides") {
  TempDb db;
  // 4096^3 (mm_small) and 4095^3 (mm_fp32) are both about 0.001 from 4097x4099x4097; the odd one
  // is the evidence for an odd problem, the power of two for a power of two.
  const auto user = db.write({{host_fp(), key(4096, 4096, 4096), "mm_small", 10.0},
                              {host_fp(), key(4095, 4095, 4095), "mm_fp32", 10.0},
                              {host_fp(), key(3001, 3001, 3001), "mm_vendor", 10.0}});
  kiln::Runtime rt(mm_registry(), kiln_test::offline_options(user));
  const kiln::Decision odd = decide(rt, 4097, 4099, 4097);
  INFO(odd.explain());
  CHECK(odd.variant->name() == "mm_fp32");
  REQUIRE(odd.hit);
  CHECK(odd.hit->problem_key == key(4095, 4095, 4095));
  CHECK(decide(rt, 4096, 4096, 4080).variant->name() == "mm_small");  // 4080 = 255 * 16
  // Past kTieBand the nearer entries decide, however they divide: 4000x3999x3999 is 0.06 from
  // 4096^3 and 4095^3 (4095 divides more like it), 0.70 from 3001^3 (which divides exactly like it).
  CHECK(decide(rt, 4000, 3999, 3999).variant->name() == "mm_fp32");
  CHECK(decide(rt, 3002, 3001, 3001).variant->name() == "mm_vendor");
  // Equal divisibility within the band: the nearer one (3500x3501x3501: 0.385 from 3001^3,
  // 0.392 from 4095^3, both 2 factors of two apart).
  const kiln::Decision mid = decide(rt, 3500, 3501, 3501);
  REQUIRE(mid.hit);
  CHECK(mid.hit->problem_key == key(3001, 3001, 3001));
}

// "sel": a top-k-like op over n keys with two mode dims, `largest` and `stable`; 16- and 32-bit dtypes.
std::shared_ptr<kiln::OpSchema> sel_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "sel";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->dim_names = {"n", "largest", "stable"};
  s->mode_dims = {"largest", "stable"};
  s->dtypes = {kiln::f16, kiln::bf16, kiln::f32};
  s->scalars = {{"largest", 1.0}, {"stable", 0.0}};
  s->make_problem = [](const kiln::Args& a, kiln::Problem& p) {
    p.dtype = a.tensor(0).dtype;
    p.n_dims = 3;
    p.dims[0] = a.tensor(0).cols();
    p.dims[1] = a.scalar(0) != 0.0 ? 1 : 0;
    p.dims[2] = a.scalar(1) != 0.0 ? 1 : 0;
    return kiln::Status();
  };
  s->scalars_for = [](const kiln::Problem& p, kiln::Args& args) {
    if (args.scalar_count() < 2) args.resize_scalars(2);
    args.set_scalar(0, double(p.dims[1]));
    args.set_scalar(1, double(p.dims[2]));
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{p.dtype, kiln::Shape::vector(p.dims[0])}, {p.dtype, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = [](const kiln::Args&, const kiln::Problem&) { return kiln::Status(); };
  s->work = [](const kiln::Problem& p) { return double(p.dims[0]); };
  return s;
}

class SelVariant final : public kiln::Variant {
 public:
  SelVariant(std::string name, int priority)
      : Variant({std::move(name), "sel", kiln::DeviceKind::host, {kiln::f16, kiln::bf16, kiln::f32}, priority, "test"},
                kiln::ParamSpace().param("tile", {16, 32, 64})) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"tile", 32}}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*, kiln::Stream) const override {
    return kiln::Status();
  }
};

std::string sel_key(const char* dtype, std::int64_t n, int largest, int stable = 0) {
  return std::string(dtype) + "|n=" + std::to_string(n) + "|largest=" + std::to_string(largest) +
         "|stable=" + std::to_string(stable);
}

TEST_CASE("evidence: with no entry of the class near, a sibling class's neighbours decide") {
  kiln::Registry r;
  r.add_op(sel_schema());
  r.add_variant(std::make_shared<SelVariant>("sel_sort", 50));  // first by priority, and the far entry's winner
  r.add_variant(std::make_shared<SelVariant>("sel_warp", 40));
  TempDb db;
  // f16 at n = 1024: warp select wins by 3x.  bf16's own class has one entry, 2^10 times larger.
  const auto user = db.write({{host_fp(), sel_key("f16", 1024, 1), "sel_warp", 10.0, 32, "[\"sel_sort tile=32 30\"]"},
                              {host_fp(), sel_key("bf16", 1 << 20, 1), "sel_sort", 900.0}},
                             "sel");
  kiln::Runtime rt(std::move(r), kiln_test::offline_options(user));
  const auto& s = rt.registry().op("sel");
  auto decide_sel = [&](kiln::DType t, std::int64_t n, int largest, int stable = 0) {
    return rt.explain(s.problem_from_dims(t, {n, largest, stable}, kiln::Device::host()));
  };

  // bf16 is f16's sibling (same width): its entry at distance 0.04 outweighs bf16's own at 10.
  const kiln::Decision d = decide_sel(kiln::bf16, 1000, 1);
  INFO(d.explain());
  CHECK(d.evidence == kiln::Decision::Evidence::sibling_neighbour);
  CHECK(d.from == kiln::Decision::From::database);
  CHECK(d.variant->name() == "sel_warp");
  REQUIRE(d.hit);
  CHECK(d.hit->problem_key == sel_key("f16", 1024, 1));
  CHECK(kiln_test::contains(d.explain(), "evidence: sibling class's tuned neighbour"));
  // Near its own entry, the class's own evidence decides.
  CHECK(decide_sel(kiln::bf16, 1 << 19, 1).evidence == kiln::Decision::Evidence::neighbour);
  CHECK(decide_sel(kiln::bf16, 1 << 19, 1).variant->name() == "sel_sort");

  // Mode dims are never crossed: f16 largest=0 does not take the f16 largest=1 entry's word, nor
  // does stable=1; f32 (another width) does not take f16's.
  for (const kiln::Decision& none :
       {decide_sel(kiln::f16, 1000, 0), decide_sel(kiln::f16, 1000, 1, 1), decide_sel(kiln::f32, 1000, 1)}) {
    INFO(none.explain());
    CHECK(none.evidence == kiln::Decision::Evidence::priority);
    CHECK(none.variant->name() == "sel_sort");
  }
  // With no entry of its own class at all, the nearest sibling entry decides at any distance.
  SECTION("no entry of the class: a far sibling entry before the fallbacks") {
    TempDb db2;
    const auto user2 = db2.write({{host_fp(), sel_key("f16", 1024, 1), "sel_warp", 10.0}}, "sel");
    kiln::Registry r2;
    r2.add_op(sel_schema());
    r2.add_variant(std::make_shared<SelVariant>("sel_sort", 50));
    r2.add_variant(std::make_shared<SelVariant>("sel_warp", 40));
    kiln::Runtime rt2(std::move(r2), kiln_test::offline_options(user2));
    const kiln::Decision far =
        rt2.explain(rt2.registry().op("sel").problem_from_dims(kiln::bf16, {1 << 22, 1, 0}, kiln::Device::host()));
    INFO(far.explain());
    CHECK(far.evidence == kiln::Decision::Evidence::sibling_neighbour);
    CHECK(far.variant->name() == "sel_warp");
    CHECK(far.distance == Approx(12.0));
  }
  // bf16 largest=0 has no sibling entry: f16 largest=0 has none, and largest=1 is another mode.
  const kiln::Decision two_apart = decide_sel(kiln::bf16, 1000, 0);
  INFO(two_apart.explain());
  CHECK(two_apart.evidence != kiln::Decision::Evidence::sibling_neighbour);
  CHECK(two_apart.variant->name() == "sel_sort");
}
