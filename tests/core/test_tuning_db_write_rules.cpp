// TuningDb::update() and TuningDb::write_file() hold every entry to the rules the YAML reader
// applies: an entry the reader would skip (a bad variant name, a NaN time, a key that is no
// problem key, an op or device key it refuses) is refused with TuningDbError before the file is
// touched.  It was written, and the next read dropped it with a warning: stored, then lost.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "kiln/errors.hpp"
#include "kiln/tuning_db.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using kiln_test::contains;
using kiln_test::error_message;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("kiln-db-write-rules-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
    fs::permissions(path, fs::perms(0755));
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

kiln::TuningEntry good_entry() {
  kiln::TuningEntry e;
  e.variant = "gemm_blocked";
  e.config.set("BM", 64);
  e.median_us = 10.5;
  e.mad_us = 0.5;
  e.samples = 20;
  e.throughput = 1.5;
  e.throughput_unit = "TFLOP/s";
  e.plugin_name = "gemm";
  e.plugin_version = "0.1.0";
  e.plugin_build = "abc123";
  e.tuned_at = "2026-11-21T10:00:00Z";
  return e;
}

const char* const kDev = "NVIDIA H200|sm_90|132sm";
const char* const kKey = "f32|m=64|n=64|k=64";

}  // namespace

TEST_CASE("TuningDb::update refuses an entry the reader would skip, leaving the file as it was") {
  TempDir dir;
  const std::string path = dir.file("tuning.yaml");
  kiln::TuningDb db({}, path);
  db.update([](kiln::TuningTable& t) { t[kDev]["gemm"][kKey] = good_entry(); });
  const std::string before = slurp(path);
  REQUIRE(!before.empty());

  auto refused = [&](const std::function<void(kiln::TuningTable&)>& edit) {
    return error_message([&] { db.update(edit); });
  };
  SECTION("a NaN median") {
    kiln::TuningEntry e = good_entry();
    e.median_us = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(db.update([&](kiln::TuningTable& t) { t[kDev]["gemm"]["f32|m=1|n=1|k=1"] = e; }), kiln::TuningDbError);
    CHECK(refused([&](kiln::TuningTable& t) { t[kDev]["gemm"]["f32|m=1|n=1|k=1"] = e; }) ==
          "tuning database '" + path + "': not written: devices/\"NVIDIA H200|sm_90|132sm\"/gemm/\"f32|m=1|n=1|k=1\": "
          "`median_us` must be a finite number >= 0; the file is left as it was");
  }
  SECTION("a variant name with a space") {
    kiln::TuningEntry e = good_entry();
    e.variant = "gemm blocked";
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[kDev]["gemm"][kKey] = e; }),
                   "/gemm/\"f32|m=64|n=64|k=64\": `variant` 'gemm blocked' is not a variant name; the file is left as it was"));
  }
  SECTION("a key that is no problem key") {
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[kDev]["gemm"]["m=64"] = good_entry(); }),
                   "problem key 'm=64' does not start with a dtype name (f32|m=64|...)"));
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[kDev]["gemm"]["f32|m=1|m=2"] = good_entry(); }),
                   "problem key 'f32|m=1|m=2' gives dim 'm' twice"));
  }
  SECTION("an op or device key the reader refuses") {
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[kDev]["ge mm"][kKey] = good_entry(); }),
                   "op 'ge mm' is not an op name (letters, digits and '_')"));
    CHECK(contains(refused([&](kiln::TuningTable& t) { t["dev\n"]["gemm"][kKey] = good_entry(); }),
                   "device key 'dev\\x0a' is empty or not printable ASCII, expected a device fingerprint"));
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[""]["gemm"][kKey] = good_entry(); }),
                   "device key '' is empty"));
  }
  SECTION("control characters in a text field") {
    kiln::TuningEntry e = good_entry();
    e.tuned_at = "2026\x1b[2J";
    CHECK(contains(refused([&](kiln::TuningTable& t) { t[kDev]["gemm"][kKey] = e; }),
                   "`tuned_at` holds control or non-ASCII characters"));
  }
  CHECK(slurp(path) == before);
  kiln::TuningDb again({}, path);
  REQUIRE(again.layers().size() == 1);
  CHECK(again.layers().front().table.at(kDev).at("gemm").size() == 1);
  CHECK(again.warnings().empty());
}

TEST_CASE("TuningDb::write_file refuses a table that would not read back, and writes nothing") {
  TempDir dir;
  const std::string path = dir.file("out.yaml");
  kiln::TuningTable table;
  table[kDev]["gemm"][kKey] = good_entry();
  table[kDev]["gemm"][kKey].samples = -3;
  CHECK_THROWS_AS(kiln::TuningDb::write_file(path, table), kiln::TuningDbError);
  CHECK(error_message([&] { kiln::TuningDb::write_file(path, table); }) ==
        "tuning database '" + path + "': not written: devices/\"NVIDIA H200|sm_90|132sm\"/gemm/\"f32|m=64|n=64|k=64\": "
        "`samples` must not be negative; the file is left as it was");
  CHECK(!fs::exists(path));

  // A valid table is written and reads back as it was, odd but printable text included.
  table[kDev]["gemm"][kKey].samples = 3;
  for (const char* text : {"~", "null", "true", "#x", "- a", ": y", "[1]", "{a: 1}", "'q'", "\"q\"", "", " lead", "0x10"}) {
    table[kDev]["gemm"][kKey].tuned_at = text;
    table[kDev]["gemm"][kKey].throughput_unit = text;
    table[kDev]["gemm"][kKey].plugin_version = text;
    kiln::TuningDb::write_file(path, table);
    std::vector<std::string> warnings;
    const kiln::TuningTable back = kiln::TuningDb::read_file(path, &warnings);
    INFO("text: '" << text << "'");
    CHECK(warnings.empty());
    CHECK(back == table);
  }
}
