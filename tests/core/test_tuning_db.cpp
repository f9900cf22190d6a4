// TuningDb: YAML round trip, lookup (exact key, nearest of a bucket, device fallback levels,
// layers, accept), corrupt and wrong-schema files, and concurrent writers.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "kiln/errors.hpp"
#include "kiln/op_schema.hpp"
#include "kiln/tuning_db.hpp"

namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() /
           ("kiln-tuning-db-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
            std::to_string(stamp));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The message of the TuningDbError `fn` throws ("" when it throws none).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const kiln::TuningDbError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const kiln::OpSchema& gemm_schema() {
  static const kiln::OpSchema schema = [] {
    kiln::OpSchema s;
    s.name = "gemm";
    s.dim_names = {"m", "n", "k"};
    s.dtypes = {kiln::f32, kiln::f64};
    return s;
  }();
  return schema;
}

kiln::Problem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, kiln::DType dtype = kiln::f32) {
  kiln::Problem p;
  p.schema = &gemm_schema();
  p.dtype = dtype;
  p.n_dims = 3;
  p.dims[0] = m;
  p.dims[1] = n;
  p.dims[2] = k;
  p.device = kiln::Device::cuda(0);
  return p;
}

std::string gemm_key(std::int64_t m, std::int64_t n, std::int64_t k, kiln::DType dtype = kiln::f32) {
  return gemm_problem(m, n, k, dtype).key();
}

kiln::DeviceInfo h200() {
  kiln::DeviceInfo d;
  d.device = kiln::Device::cuda(0);
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  return d;
}

const std::string kH200 = "NVIDIA H200|sm_90|132sm";
const std::string kH100Sxm = "NVIDIA H100 80GB HBM3|sm_90|132sm";
const std::string kH100Pcie = "NVIDIA H100 PCIe|sm_90|114sm";
const std::string kA100 = "NVIDIA A100-SXM4-80GB|sm_80|108sm";

kiln::TuningEntry entry(const std::string& variant, double median_us = 100.0, const std::string& build = "b1") {
  kiln::TuningEntry e;
  e.variant = variant;
  e.config = kiln::Config{{"BN", 128}, {"BM", 64}, {"BK", 16}};  // deliberately not alphabetical
  e.median_us = median_us;
  e.mad_us = 0.5;
  e.samples = 50;
  e.throughput = 12.25;
  e.throughput_unit = "TFLOP/s";
  e.plugin_name = "gemm";
  e.plugin_version = "0.1.0";
  e.plugin_build = build;
  e.tuned_at = "2026-11-21T10:00:00Z";
  return e;
}

const auto accept_all = [](const kiln::TuningEntry&) { return true; };
// Every problem of one dtype in one bucket: nearest search then ranks by distance alone.
const auto one_bucket = [](const kiln::Problem& p) { return std::string(kiln::dtype_name(p.dtype)); };

}  // namespace

TEST_CASE("tuning db: YAML round trip keeps every field and the config order") {
  TempDir dir;
  kiln::TuningTable table;
  table[kH200]["gemm"][gemm_key(4096, 4096, 4096)] = entry("gemm_register_blocked", 2701.3);
  kiln::TuningEntry odd = entry("gemm_tiled_smem", 0.1 + 0.2);  // needs 17 digits to round-trip
  odd.mad_us = 1e-7;
  odd.throughput = 1.0 / 3.0;
  odd.config = kiln::Config{{"threads", 256}, {"A", -1}};
  odd.plugin_build = "";
  odd.tuned_at = "2026-01-02T03:04:05Z";
  table[kH200]["gemm"][gemm_key(1, 7, 1000003)] = odd;
  kiln::TuningEntry with_alternatives = entry("gemm_cublas", 12.5);
  with_alternatives.alternatives = {{"gemm_tiled", kiln::Config{{"TILE", 16}}, 14.25, ""},
                                    {"gemm_naive", kiln::Config{}, 0.1 + 0.2, "b7"}};
  table[kH200]["gemm"][gemm_key(100, 200, 300)] = with_alternatives;
  kiln::TuningEntry bare = entry("transpose_tiled_padded", 5.0);
  bare.config = kiln::Config{};
  table[kA100]["transpose"]["f32|m=1|n=1"] = bare;

  const std::string path = dir.file("sub/dir/db.yaml");  // parents are created
  kiln::TuningDb::write_file(path, table);
  const kiln::TuningTable back = kiln::TuningDb::read_file(path);
  REQUIRE(back == table);
  CHECK(back.at(kH200).at("gemm").at(gemm_key(1, 7, 1000003)).config.values().front().first == "threads");
  const auto& cfg = back.at(kH200).at("gemm").at(gemm_key(4096, 4096, 4096)).config.values();
  REQUIRE(cfg.size() == 3);
  CHECK(cfg[0].first == "BN");
  CHECK(cfg[1].first == "BM");
  CHECK(cfg[2].first == "BK");

  const std::string text = slurp(path);
  CHECK(contains(text, "schema: 1"));
  CHECK(contains(text, "config: {BN: 128, BM: 64, BK: 16}"));
  CHECK(contains(text, "median_us: 2701.3\n"));  // shortest form, not 2701.3000000000002
  CHECK(contains(text, "plugin: {name: gemm, version: 0.1.0, build: b1}"));
  CHECK(contains(text, "\"NVIDIA H200|sm_90|132sm\":"));
  CHECK(contains(text, "alternatives:\n"));
  CHECK(contains(text, "- gemm_tiled TILE=16 14.25\n"));
  CHECK(contains(text, "- gemm_naive - 0.30000000000000004 b7\n"));
  CHECK(back.at(kH200).at("gemm").at(gemm_key(100, 200, 300)).alternatives.size() == 2);
  CHECK(back.at(kH200).at("gemm").at(gemm_key(4096, 4096, 4096)).alternatives.empty());
  // Deterministic: writing what was read gives the same bytes; no temp file is left behind.
  CHECK(kiln::TuningDb::to_yaml(back) == text);
  int files = 0;
  for (const auto& f : fs::directory_iterator(dir.path / "sub/dir")) {
    (void)f;
    ++files;
  }
  CHECK(files == 1);

  // An empty table still writes a valid file.
  kiln::TuningDb::write_file(path, {});
  CHECK(kiln::TuningDb::read_file(path).empty());
}

TEST_CASE("tuning db: reads the documented format") {
  const std::string text =
      "schema: 1\n"
      "devices:\n"
      "  \"NVIDIA H200|sm_90|132sm\":\n"
      "    gemm:\n"
      "      \"f32|m=4096|n=4096|k=4096\":\n"
      "        variant: gemm_register_blocked\n"
      "        config: {BM: 128, BN: 128, BK: 16, TM: 8, TN: 8}\n"
      "        median_us: 2701.3\n"
      "        mad_us: 4.1\n"
      "        samples: 50\n"
      "        throughput: 50.9\n"
      "        throughput_unit: TFLOP/s\n"
      "        plugin: {name: gemm, version: 0.1.0, build: 3f9c2a1}\n"
      "        tuned_at: 2026-11-21T10:00:00Z\n";
  const kiln::TuningTable t = kiln::TuningDb::from_yaml(text, "example");
  const kiln::TuningEntry& e = t.at(kH200).at("gemm").at("f32|m=4096|n=4096|k=4096");
  CHECK(e.variant == "gemm_register_blocked");
  CHECK((e.config == kiln::Config{{"BM", 128}, {"BN", 128}, {"BK", 16}, {"TM", 8}, {"TN", 8}}));
  CHECK(e.median_us == 2701.3);
  CHECK(e.mad_us == 4.1);
  CHECK(e.samples == 50);
  CHECK(e.throughput == 50.9);
  CHECK(e.throughput_unit == "TFLOP/s");
  CHECK(e.plugin_name == "gemm");
  CHECK(e.plugin_version == "0.1.0");
  CHECK(e.plugin_build == "3f9c2a1");
  CHECK(e.tuned_at == "2026-11-21T10:00:00Z");
  CHECK(kiln::TuningDb::from_yaml(kiln::TuningDb::to_yaml(t), "again") == t);
  // An empty document (a touched file) holds nothing and is not an error.
  CHECK(kiln::TuningDb::from_yaml("", "empty").empty());
  CHECK(kiln::TuningDb::from_yaml("schema: 1\n", "no devices").empty());
}

TEST_CASE("tuning db: a bad alternative skips its entry with a reason") {
  const std::string head =
      "schema: 1\n"
      "devices:\n"
      "  \"NVIDIA H200|sm_90|132sm\":\n"
      "    gemm:\n"
      "      \"f32|m=4|n=4|k=4\":\n"
      "        variant: gemm_cublas\n"
      "        config: {}\n"
      "        median_us: 3\n";
  const std::pair<const char*, const char*> bad[] = {
      {"        alternatives: {variant: x}\n", "must be a list"},
      {"        alternatives:\n          - [gemm_tiled]\n", "an alternative must be"},
      {"        alternatives:\n          - gemm_tiled\n", "an alternative must be"},
      {"        alternatives:\n          - gemm_tiled - 1 b1 more\n", "an alternative must be"},
      {"        alternatives:\n          - gemm_tiled - -1\n", "finite number >= 0"},
      {"        alternatives:\n          - gemm_tiled - fast\n", "is not a number"},
      {"        alternatives:\n          - gemm_tiled - .nan\n", "is not a number"},
      {"        alternatives:\n          - gemm_tiled TILE=x 1\n", "is not name=integer"},
      {"        alternatives:\n          - gemm_tiled TILE 1\n", "is not name=integer"},
      {"        alternatives:\n          - gemm_tiled TILE=99999999999 1\n", "is not name=integer"},
      {"        alternatives:\n          - gemm/tiled - 1\n", "is not a variant name"},
      {"        alternatives:\n          - gemm_tiled t-1=2 1\n", "is not a parameter name"},
  };
  for (const auto& [tail, reason] : bad) {
    std::vector<std::string> warnings;
    const kiln::TuningTable t = kiln::TuningDb::from_yaml(head + tail, "bad alternative", &warnings);
    INFO(tail);
    std::size_t entries = 0;
    for (const auto& [dev, ops] : t)
      for (const auto& [op, keys] : ops) entries += keys.size();
    CHECK(entries == 0);
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], reason));
  }
  std::vector<std::string> warnings;
  const kiln::TuningTable good = kiln::TuningDb::from_yaml(
      head + "        alternatives:\n          - gemm_tiled TILE=16,BK=8 4.5 b1\n          - gemm_naive - 9\n", "good",
      &warnings);
  CHECK(warnings.empty());
  const auto& alts = good.at(kH200).at("gemm").at("f32|m=4|n=4|k=4").alternatives;
  REQUIRE(alts.size() == 2);
  CHECK(alts[0].variant == "gemm_tiled");
  CHECK((alts[0].config == kiln::Config{{"TILE", 16}, {"BK", 8}}));
  CHECK(alts[0].median_us == 4.5);
  CHECK(alts[0].plugin_build == "b1");
  CHECK(alts[1].variant == "gemm_naive");
  CHECK(alts[1].config.values().empty());
  CHECK(alts[1].plugin_build.empty());
}

TEST_CASE("tuning db: bad files are reported with the path and the reason") {
  TempDir dir;
  SECTION("missing file") {
    const std::string path = dir.file("absent.yaml");
    const std::string msg = error_of([&] { kiln::TuningDb::read_file(path); });
    CHECK(contains(msg, path));
  }
  SECTION("YAML syntax error names the line") {
    const std::string path = dir.file("broken.yaml");
    spit(path, "schema: 1\ndevices:\n  \"x|sm_90|1sm\": {gemm: [unclosed\n");
    const std::string msg = error_of([&] { kiln::TuningDb::read_file(path); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "line "));
    CHECK(contains(msg, "invalid YAML"));
  }
  SECTION("wrong schema number") {
    const std::string path = dir.file("future.yaml");
    spit(path, "schema: 2\ndevices: {}\n");
    const std::string msg = error_of([&] { kiln::TuningDb::read_file(path); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "schema 2"));
  }
  SECTION("no schema") {
    spit(dir.file("noschema.yaml"), "devices: {}\n");
    CHECK(contains(error_of([&] { kiln::TuningDb::read_file(dir.file("noschema.yaml")); }), "schema"));
  }
  SECTION("not a map") {
    spit(dir.file("list.yaml"), "- 1\n- 2\n");
    CHECK(!error_of([&] { kiln::TuningDb::read_file(dir.file("list.yaml")); }).empty());
  }
  SECTION("malformed entries are skipped, each with a warning naming it") {
    const std::string head = "schema: 1\ndevices:\n  \"NVIDIA H200|sm_90|132sm\":\n    gemm:\n      \"f32|m=1|n=1|k=1\":\n";
    struct Bad {
      const char* body;
      const char* says;
    };
    const Bad bad[] = {
        {"        config: {BM: 64}\n", "variant"},
        {"        variant: v\n", "config"},
        {"        variant: v\n        config: [64, 64]\n", "config"},
        {"        variant: v\n        config: {BM: big}\n", "BM"},
        {"        variant: v\n        config: {BM: 1.5}\n", "BM"},
        {"        variant: v\n        config: {BM: 64}\n        median_us: fast\n", "median_us"},
        {"        variant: v\n        config: {BM: 64}\n        samples: 2.5\n", "samples"},
        {"        variant: [v]\n        config: {BM: 64}\n", "variant"},
        {"        variant: v\n        config: {BM: 64, BM: 32}\n", "duplicate"},
        {"        just a string\n", "entry"},
    };
    for (const Bad& b : bad) {
      const std::string path = dir.file("bad.yaml");
      spit(path, head + b.body);
      std::vector<std::string> warnings;
      const kiln::TuningTable t = kiln::TuningDb::read_file(path, &warnings);
      INFO(b.body);
      CHECK(t.at("NVIDIA H200|sm_90|132sm").at("gemm").empty());
      REQUIRE(warnings.size() == 1);
      INFO(warnings[0]);
      CHECK(contains(warnings[0], path));
      CHECK(contains(warnings[0], "f32|m=1|n=1|k=1"));
      CHECK(contains(warnings[0], b.says));
    }
  }
}

TEST_CASE("tuning db: a corrupt file is reported, skipped and never overwritten") {
  TempDir dir;
  const std::string user = dir.file("user.yaml");
  const std::string shipped = dir.file("shipped.yaml");
  const std::string corrupt = "schema: 1\ndevices: {\"NVIDIA H200|sm_90|132sm\": {gemm: {oops\n\t: ]]\n";
  spit(user, corrupt);
  kiln::TuningTable ship;
  ship[kH200]["gemm"][gemm_key(64, 64, 64)] = entry("from_shipped");
  kiln::TuningDb::write_file(shipped, ship);

  kiln::TuningDb db({shipped}, user);  // does not throw
  REQUIRE(db.errors().size() == 1);
  CHECK(contains(db.errors()[0], user));
  REQUIRE(db.layers().size() == 1);  // the user layer is skipped, the shipped one still works
  CHECK(db.layers()[0].path == shipped);
  auto hit = db.lookup(h200(), "gemm", gemm_problem(64, 64, 64), "f32", accept_all);
  REQUIRE(hit);
  CHECK(hit->entry.variant == "from_shipped");

  REQUIRE_THROWS_AS(db.put(kH200, "gemm", gemm_key(8, 8, 8), entry("new")), kiln::TuningDbError);
  CHECK(slurp(user) == corrupt);
  REQUIRE_THROWS_AS(db.prune([](auto&&...) { return true; }), kiln::TuningDbError);
  CHECK(slurp(user) == corrupt);
  db.reload();
  CHECK(db.errors().size() == 1);
  CHECK(slurp(user) == corrupt);
  // Nothing but the corrupt file, the shipped file and the lock file: no stray temp files.
  int files = 0;
  for (const auto& f : fs::directory_iterator(dir.path)) {
    CHECK(!contains(f.path().filename().string(), ".tmp."));
    ++files;
  }
  CHECK(files == 3);

  // A wrong-schema shipped file is skipped the same way, and a missing one is reported.
  const std::string future = dir.file("future.yaml");
  spit(future, "schema: 7\ndevices: {}\n");
  kiln::TuningDb db2({shipped, future, dir.file("missing.yaml")}, dir.file("fresh/user.yaml"));
  CHECK(db2.errors().size() == 2);
  CHECK(db2.layers().size() == 2);  // fresh (empty) user layer + the good shipped file
  CHECK(slurp(future) == "schema: 7\ndevices: {}\n");
}

TEST_CASE("tuning db: a missing user file is an empty layer and put() creates it") {
  TempDir dir;
  const std::string user = dir.file("a/b/tuning.yaml");
  kiln::TuningDb db({}, user);
  CHECK(db.errors().empty());
  REQUIRE(db.layers().size() == 1);
  CHECK(db.layers()[0].writable);
  CHECK(!db.lookup(h200(), "gemm", gemm_problem(8, 8, 8), "f32", accept_all));

  db.put(kH200, "gemm", gemm_key(8, 8, 8), entry("v8"));
  CHECK(fs::exists(user));
  auto hit = db.lookup(h200(), "gemm", gemm_problem(8, 8, 8), "f32", accept_all);
  REQUIRE(hit);
  CHECK(hit->entry == entry("v8"));
  CHECK(hit->layer_path == user);
  CHECK(hit->level == kiln::FallbackLevel::exact);
  CHECK(hit->exact_problem);

  // Another TuningDb on the same file (another process, in effect): its put() keeps ours.
  kiln::TuningDb other({}, user);
  other.put(kH200, "gemm", gemm_key(16, 16, 16), entry("v16"));
  db.put(kH200, "gemm", gemm_key(32, 32, 32), entry("v32"));
  const kiln::TuningTable on_disk = kiln::TuningDb::read_file(user);
  CHECK(on_disk.at(kH200).at("gemm").size() == 3);
  CHECK(db.layers()[0].table == on_disk);  // the in-memory layer follows the file

  // A default-constructed db has nowhere to write.
  kiln::TuningDb none;
  REQUIRE_THROWS_AS(none.put(kH200, "gemm", gemm_key(8, 8, 8), entry("v")), kiln::TuningDbError);
}

TEST_CASE("tuning db: device fallback levels") {
  TempDir dir;
  const std::string shipped = dir.file("shipped.yaml");
  const kiln::Problem p = gemm_problem(256, 256, 256);
  const std::string key = p.key();
  kiln::TuningTable t;
  t[kA100]["gemm"][key] = entry("on_a100");
  t["host-cpu|host|16t"]["gemm"][key] = entry("on_host");  // never used for a GPU
  auto level_of = [&]() -> std::optional<kiln::TuningHit> {
    kiln::TuningDb::write_file(shipped, t);
    kiln::TuningDb db({shipped}, "");
    REQUIRE(db.errors().empty());
    return db.lookup(h200(), "gemm", p, "f32", accept_all);
  };

  auto hit = level_of();
  REQUIRE(hit);
  CHECK(hit->level == kiln::FallbackLevel::any);
  CHECK(hit->device_key == kA100);

  t[kH100Pcie]["gemm"][key] = entry("on_h100_pcie");
  hit = level_of();
  REQUIRE(hit);
  CHECK(hit->level == kiln::FallbackLevel::arch);
  CHECK(hit->entry.variant == "on_h100_pcie");

  t[kH100Sxm]["gemm"][key] = entry("on_h100_sxm");
  hit = level_of();
  REQUIRE(hit);
  CHECK(hit->level == kiln::FallbackLevel::arch_and_sms);
  CHECK(hit->device_key == kH100Sxm);
  CHECK(hit->entry.variant == "on_h100_sxm");
  CHECK(hit->problem_key == key);
  CHECK(hit->exact_problem);

  t[kH200]["gemm"][key] = entry("on_h200");
  hit = level_of();
  REQUIRE(hit);
  CHECK(hit->level == kiln::FallbackLevel::exact);
  CHECK(hit->entry.variant == "on_h200");
  CHECK(hit->layer_path == shipped);

  // Another op or another dtype finds nothing.
  kiln::TuningDb db({shipped}, "");
  CHECK(!db.lookup(h200(), "transpose", p, "f32", accept_all));
  CHECK(!db.lookup(h200(), "gemm", gemm_problem(256, 256, 256, kiln::f64), "f64", accept_all, one_bucket));
}

TEST_CASE("tuning db: nearest entry of the same bucket") {
  TempDir dir;
  const std::string shipped = dir.file("shipped.yaml");
  kiln::TuningTable t;
  t[kH200]["gemm"][gemm_key(1024, 1024, 1024)] = entry("at_1024");
  t[kH200]["gemm"][gemm_key(2048, 2048, 2048)] = entry("at_2048");
  t[kH200]["gemm"][gemm_key(4096, 4096, 4096)] = entry("at_4096");
  t[kH200]["gemm"][gemm_key(3000, 3000, 3000, kiln::f64)] = entry("f64_3000");
  t[kH200]["gemm"]["f32|m=3000|n=3000"] = entry("other_dims");
  // (An unparsable key such as "not a key" is no longer written: write_file refuses what the
  // reader would skip; the reader's side is tested with hand-written files.)
  kiln::TuningDb::write_file(shipped, t);
  kiln::TuningDb db({shipped}, "");
  REQUIRE(db.errors().empty());
  const kiln::DeviceInfo dev = h200();

  SECTION("smallest log-distance wins, other dtypes and dim names are ignored") {
    // log2(3000) = 11.55: 0.45 per dim to 4096, 0.55 to 2048.
    auto hit = db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "f32", accept_all, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_4096");
    CHECK(!hit->exact_problem);
    CHECK(hit->problem_key == gemm_key(4096, 4096, 4096));
    CHECK(hit->level == kiln::FallbackLevel::exact);
    // Dims are compared one by one: m near 1024 and n, k near 2048 sum nearer to 2048.
    hit = db.lookup(dev, "gemm", gemm_problem(1024, 2048, 2048 + 100), "f32", accept_all, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_2048");
  }
  SECTION("an exact key beats any nearer-looking one") {
    auto hit = db.lookup(dev, "gemm", gemm_problem(1024, 1024, 1024), "f32", accept_all, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_1024");
    CHECK(hit->exact_problem);
  }
  SECTION("a tie goes to the lexicographically smaller key") {
    // With the 2048 entry rejected, 2048 is 3 (1 per dim) from both 1024 and 4096.
    auto not_2048 = [](const kiln::TuningEntry& e) { return e.variant != "at_2048"; };
    auto hit = db.lookup(dev, "gemm", gemm_problem(2048, 2048, 2048), "f32", not_2048, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_1024");  // "f32|m=1024|..." < "f32|m=4096|..."
  }
  SECTION("entries of another bucket are not candidates") {
    auto small_or_big = [](const kiln::Problem& p) { return std::string(p.dim(0) >= 4096 ? "big" : "small"); };
    auto hit = db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "small", accept_all, small_or_big);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_2048");
    hit = db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "big", accept_all, small_or_big);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_4096");
    CHECK(!db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "neither", accept_all, small_or_big));
  }
  SECTION("the bucket function sees the stored problem with the caller's schema") {
    std::vector<std::string> seen;
    auto spy = [&](const kiln::Problem& p) {
      CHECK(p.schema == &gemm_schema());
      seen.push_back(p.key());
      return std::string("f32");
    };
    REQUIRE(db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "f32", accept_all, spy));
    CHECK(seen.size() == 3);  // the three f32 m,n,k entries only
  }
  SECTION("no bucket function: exact keys only") {
    CHECK(!db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "f32", accept_all));
  }
  SECTION("dims <= 0 count as 1") {
    kiln::TuningTable z;
    z[kH200]["gemm"][gemm_key(1, 1, 1)] = entry("at_1");
    z[kH200]["gemm"][gemm_key(4, 4, 4)] = entry("at_4");
    kiln::TuningDb::write_file(shipped, z);
    kiln::TuningDb dbz({shipped}, "");
    auto hit = dbz.lookup(dev, "gemm", gemm_problem(0, 0, 0), "f32", accept_all, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_1");
  }
  SECTION("nearest at a specific device level beats an exact key at a fallback level") {
    t[kH100Sxm]["gemm"][gemm_key(3000, 3000, 3000)] = entry("h100_exact");
    kiln::TuningDb::write_file(shipped, t);
    db.reload();
    auto hit = db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "f32", accept_all, one_bucket);
    REQUIRE(hit);
    CHECK(hit->entry.variant == "at_4096");
    CHECK(hit->level == kiln::FallbackLevel::exact);
    hit = db.lookup(dev, "gemm", gemm_problem(3000, 3000, 3000), "f32", accept_all);  // no nearest
    REQUIRE(hit);
    CHECK(hit->entry.variant == "h100_exact");
    CHECK(hit->level == kiln::FallbackLevel::arch_and_sms);
  }
}

TEST_CASE("tuning db: the user layer wins over shipped files, later shipped over earlier") {
  TempDir dir;
  const std::string first = dir.file("first.yaml");
  const std::string second = dir.file("second.yaml");
  const std::string user = dir.file("user.yaml");
  const std::string k1 = gemm_key(128, 128, 128);
  const std::string k2 = gemm_key(256, 256, 256);
  const std::string k3 = gemm_key(512, 512, 512);
  kiln::TuningTable a, b;
  a[kH200]["gemm"][k1] = entry("first_k1");
  a[kH200]["gemm"][k2] = entry("first_k2");
  a[kH200]["gemm"][k3] = entry("first_k3");
  b[kH200]["gemm"][k1] = entry("second_k1");
  b[kH200]["gemm"][k2] = entry("second_k2");
  kiln::TuningDb::write_file(first, a);
  kiln::TuningDb::write_file(second, b);

  kiln::TuningDb db({first, second}, user);
  REQUIRE(db.errors().empty());
  REQUIRE(db.layers().size() == 3);
  CHECK(db.layers()[0].path == user);
  CHECK(db.layers()[1].path == second);
  CHECK(db.layers()[2].path == first);
  CHECK(!db.layers()[1].writable);

  db.put(kH200, "gemm", k1, entry("user_k1"));
  const kiln::DeviceInfo dev = h200();
  auto variant_for = [&](const std::string& key, std::int64_t d) {
    auto hit = db.lookup(dev, "gemm", gemm_problem(d, d, d), "f32", accept_all);
    REQUIRE(hit);
    CHECK(hit->problem_key == key);
    return hit->entry.variant;
  };
  CHECK(variant_for(k1, 128) == "user_k1");
  CHECK(variant_for(k2, 256) == "second_k2");
  CHECK(variant_for(k3, 512) == "first_k3");
  // The shipped files were not touched.
  CHECK(kiln::TuningDb::read_file(first) == a);
  CHECK(kiln::TuningDb::read_file(second) == b);

  // A user entry at a fallback device level still loses to a shipped entry for this very device:
  // the device level is searched before the layers.
  db.put(kH100Sxm, "gemm", k2, entry("user_h100_k2"));
  CHECK(variant_for(k2, 256) == "second_k2");
}

TEST_CASE("tuning db: entries accept() rejects are skipped") {
  TempDir dir;
  const std::string shipped = dir.file("shipped.yaml");
  const std::string user = dir.file("user.yaml");
  const std::string key = gemm_key(512, 512, 512);
  kiln::TuningTable t;
  t[kH200]["gemm"][key] = entry("shipped_current", 100.0, "current");
  kiln::TuningDb::write_file(shipped, t);
  kiln::TuningDb db({shipped}, user);
  db.put(kH200, "gemm", key, entry("user_stale", 50.0, "stale"));
  db.put(kH200, "gemm", gemm_key(500, 500, 500), entry("user_near_current", 50.0, "current"));
  const kiln::DeviceInfo dev = h200();
  const kiln::Problem p = gemm_problem(512, 512, 512);

  auto current_build = [](const kiln::TuningEntry& e) { return e.plugin_build == "current"; };
  // Stale exact user entry skipped; the nearest current user entry comes next (same layer).
  auto hit = db.lookup(dev, "gemm", p, "f32", current_build, one_bucket);
  REQUIRE(hit);
  CHECK(hit->entry.variant == "user_near_current");
  CHECK(!hit->exact_problem);
  // Without nearest search, the shipped exact entry.
  hit = db.lookup(dev, "gemm", p, "f32", current_build);
  REQUIRE(hit);
  CHECK(hit->entry.variant == "shipped_current");
  CHECK(hit->layer_path == shipped);
  // Accepting everything: the user's exact entry.
  hit = db.lookup(dev, "gemm", p, "f32", accept_all, one_bucket);
  REQUIRE(hit);
  CHECK(hit->entry.variant == "user_stale");
  // A null accept accepts everything too.
  hit = db.lookup(dev, "gemm", p, "f32", nullptr);
  REQUIRE(hit);
  CHECK(hit->entry.variant == "user_stale");
  // Rejecting everything finds nothing, at any level.
  CHECK(!db.lookup(dev, "gemm", p, "f32", [](const kiln::TuningEntry&) { return false; }, one_bucket));
}

TEST_CASE("tuning db: prune removes entries from the user file") {
  TempDir dir;
  const std::string user = dir.file("user.yaml");
  kiln::TuningDb db({}, user);
  CHECK(db.prune([](auto&&...) { return true; }) == 0);  // no file yet: nothing to do
  CHECK(!fs::exists(user));
  db.put(kH200, "gemm", gemm_key(1, 1, 1), entry("keep", 1.0, "current"));
  db.put(kH200, "gemm", gemm_key(2, 2, 2), entry("drop", 1.0, "stale"));
  db.put(kA100, "gemm", gemm_key(2, 2, 2), entry("drop", 1.0, "stale"));
  const std::size_t removed =
      db.prune([](const std::string&, const std::string&, const std::string&, const kiln::TuningEntry& e) {
        return e.plugin_build == "stale";
      });
  CHECK(removed == 2);
  const kiln::TuningTable on_disk = kiln::TuningDb::read_file(user);
  REQUIRE(on_disk.size() == 1);  // the emptied device is gone too
  CHECK(on_disk.at(kH200).at("gemm").size() == 1);
  CHECK(db.layers()[0].table == on_disk);
}

TEST_CASE("tuning db: merge_tables") {
  const std::string k = gemm_key(64, 64, 64);
  kiln::TuningTable into, from;
  kiln::TuningEntry slow_old = entry("slow_old", 200.0);
  slow_old.tuned_at = "2026-01-01T00:00:00Z";
  kiln::TuningEntry fast_new = entry("fast_new", 100.0);
  fast_new.tuned_at = "2026-06-01T00:00:00Z";
  kiln::TuningEntry slow_newest = entry("slow_newest", 300.0);
  slow_newest.tuned_at = "2026-12-01T00:00:00Z";

  into[kH200]["gemm"][k] = slow_old;
  from[kH200]["gemm"][k] = fast_new;
  from[kA100]["gemm"][k] = slow_old;
  CHECK(kiln::merge_tables(into, from) == 2);  // faster entry replaces; new device key added
  CHECK(into[kH200]["gemm"][k].variant == "fast_new");
  CHECK(kiln::merge_tables(into, from) == 0);  // idempotent

  kiln::TuningTable newer;
  newer[kH200]["gemm"][k] = slow_newest;
  CHECK(kiln::merge_tables(into, newer) == 0);  // slower loses by default
  CHECK(kiln::merge_tables(into, newer, true) == 1);  // newer wins when asked
  CHECK(into[kH200]["gemm"][k].variant == "slow_newest");
  CHECK(kiln::merge_tables(into, from, true) == 0);  // older loses
}

TEST_CASE("tuning db: merge_tables --prefer-newer compares times, not strings") {
  // tuned_at was compared as text: 11:00+05:00 (06:00 UTC) beat 10:00Z, and any word beat a time.
  const std::string k = gemm_key(64, 64, 64);
  auto merged = [&](const std::string& have, const std::string& incoming) {
    kiln::TuningTable into, from;
    kiln::TuningEntry a = entry("have", 100.0), b = entry("incoming", 100.0);
    a.tuned_at = have;
    b.tuned_at = incoming;
    into[kH200]["gemm"][k] = a;
    from[kH200]["gemm"][k] = b;
    kiln::merge_tables(into, from, true);
    return into[kH200]["gemm"][k].variant;
  };
  CHECK(merged("2026-11-21T10:00:00Z", "2026-11-21T11:00:00+05:00") == "have");      // 06:00 UTC is older
  CHECK(merged("2026-11-21T10:00:00Z", "2026-11-21T09:30:00-01:00") == "incoming");  // 10:30 UTC is newer
  CHECK(merged("2026-11-21T10:00:00Z", "2026-11-21T10:00:00.5Z") == "incoming");     // fractions count
  CHECK(merged("2026-11-21T10:00:00Z", "zzz") == "have");           // a word is no time
  CHECK(merged("2026-11-21T10:00:00Z", "9999") == "have");
  CHECK(merged("2026-11-21T10:00:00Z", "2026-13-40T10:00:00Z") == "have");  // no such date
  CHECK(merged("garbage", "2020-01-01T00:00:00Z") == "incoming");   // any time beats none
  CHECK(merged("", "2020-01-01T00:00:00Z") == "incoming");
  CHECK(merged("2026-11-21T10:00:00Z", "2026-11-21T10:00:00+00:00") == "have");  // the same instant: kept
}

TEST_CASE("tuning db: default paths from the environment") {
  struct EnvGuard {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const std::string& name, const char* value) {
      const char* old = std::getenv(name.c_str());
      saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) ::setenv(name.c_str(), value, 1);
      else ::unsetenv(name.c_str());
    }
    ~EnvGuard() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
        else ::unsetenv(it->first.c_str());
      }
    }
  } env;
  TempDir dir;

  env.set("KILN_CACHE_DIR", "/tmp/kiln-cache");
  env.set("XDG_CACHE_HOME", "/tmp/xdg");
  env.set("HOME", "/home/someone");
  CHECK(kiln::TuningDb::default_user_path() == "/tmp/kiln-cache/tuning.yaml");
  env.set("KILN_CACHE_DIR", nullptr);
  CHECK(kiln::TuningDb::default_user_path() == "/tmp/xdg/kiln/tuning.yaml");
  env.set("XDG_CACHE_HOME", nullptr);
  CHECK(kiln::TuningDb::default_user_path() == "/home/someone/.cache/kiln/tuning.yaml");

  fs::create_directories(dir.path / "configs");
  spit(dir.file("configs/b.yaml"), "schema: 1\n");
  spit(dir.file("configs/a.yaml"), "schema: 1\n");
  spit(dir.file("configs/notes.txt"), "not a database\n");
  spit(dir.file("extra.yaml"), "schema: 1\n");
  // One rule with KILN_PLUGIN_PATH: unset, the installed files; set, exactly the entries, an
  // empty entry standing for the installed directory; set to "", none.
  env.set("KILN_CONFIG_PATH", nullptr);
  const std::vector<std::string> installed = kiln::TuningDb::default_shipped_paths();
  const std::string path = dir.file("configs") + ":" + dir.file("extra.yaml");
  env.set("KILN_CONFIG_PATH", path.c_str());
  const std::vector<std::string> expected = {dir.file("configs/a.yaml"), dir.file("configs/b.yaml"),
                                             dir.file("extra.yaml")};
  CHECK(kiln::TuningDb::default_shipped_paths() == expected);
  const std::string with_installed = dir.file("configs") + "::" + dir.file("extra.yaml");
  env.set("KILN_CONFIG_PATH", with_installed.c_str());
  std::vector<std::string> expected_with_installed = {dir.file("configs/a.yaml"), dir.file("configs/b.yaml")};
  expected_with_installed.insert(expected_with_installed.end(), installed.begin(), installed.end());
  expected_with_installed.push_back(dir.file("extra.yaml"));
  CHECK(kiln::TuningDb::default_shipped_paths() == expected_with_installed);
  env.set("KILN_CONFIG_PATH", ":");
  CHECK(kiln::TuningDb::default_shipped_paths() == installed);
  env.set("KILN_CONFIG_PATH", "");
  CHECK(kiln::TuningDb::default_shipped_paths().empty());

  // A leading ~ is the home directory: nothing expands it in a Dockerfile ENV, a systemd unit or
  // a quoted shell word, and KILN_CACHE_DIR='~/kc' made ./~/kc/tuning.yaml in the working
  // directory (and said "stored in ~/kc/tuning.yaml").
  env.set("HOME", dir.path.string().c_str());
  env.set("KILN_CACHE_DIR", "~/kc");
  CHECK(kiln::TuningDb::default_user_path() == dir.file("kc/tuning.yaml"));
  env.set("KILN_CACHE_DIR", "~");
  CHECK(kiln::TuningDb::default_user_path() == dir.file("tuning.yaml"));
  env.set("KILN_CACHE_DIR", nullptr);
  env.set("XDG_CACHE_HOME", "~/xdg");
  CHECK(kiln::TuningDb::default_user_path() == dir.file("xdg/kiln/tuning.yaml"));
  // A relative XDG_CACHE_HOME is invalid (the XDG base directory spec): ignored, not a directory
  // under each program's working directory.
  env.set("XDG_CACHE_HOME", "rel/xdg");
  CHECK(kiln::TuningDb::default_user_path() == dir.file(".cache/kiln/tuning.yaml"));
  env.set("XDG_CACHE_HOME", "~/xdg");
  env.set("KILN_CONFIG_PATH", "~/configs");
  CHECK(kiln::TuningDb::default_shipped_paths() == std::vector<std::string>{dir.file("configs/a.yaml"), dir.file("configs/b.yaml")});
  // ~user is not expanded (kiln does not look up other users' homes).
  env.set("KILN_CACHE_DIR", "~root/kc");
  CHECK(kiln::TuningDb::default_user_path() == "~root/kc/tuning.yaml");
}

TEST_CASE("tuning db: concurrent writers from several processes lose no entry") {
  TempDir dir;
  const std::string user = dir.file("cache/tuning.yaml");
  constexpr int kChildren = 4;
  constexpr int kPutsEach = 25;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: no Catch2 here; the exit status says whether every put() succeeded.
      int status = 0;
      try {
        kiln::TuningDb db({}, user);
        for (int i = 0; i < kPutsEach; ++i)
          db.put(kH200, "gemm", gemm_key(c + 1, i + 1, 7), entry("child" + std::to_string(c)));
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const kiln::TuningTable t = kiln::TuningDb::read_file(user);
  REQUIRE(t.count(kH200) == 1);
  const auto& entries = t.at(kH200).at("gemm");
  CHECK(entries.size() == static_cast<std::size_t>(kChildren * kPutsEach));
  for (int c = 0; c < kChildren; ++c)
    for (int i = 0; i < kPutsEach; ++i) {
      auto it = entries.find(gemm_key(c + 1, i + 1, 7));
      REQUIRE(it != entries.end());
      CHECK(it->second.variant == "child" + std::to_string(c));
    }
  for (const auto& f : fs::directory_iterator(dir.path / "cache"))
    CHECK(!contains(f.path().filename().string(), ".tmp."));
}
