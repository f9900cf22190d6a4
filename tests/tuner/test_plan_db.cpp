// Tuning plans (YAML), problem lists, the shipped default plan, and merging databases through
// TuningDb::update (the locked read-modify-write `kiln db merge` uses).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <random>

#include <kiln/errors.hpp>
#include <kiln/tuning_db.hpp>
#include <kiln/tuner/plan.hpp>

#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_plan_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& text = "") const {
    if (!text.empty()) std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

kiln::TuningEntry entry(const std::string& variant, double median, const std::string& when) {
  kiln::TuningEntry e;
  e.variant = variant;
  e.config = kiln::Config{{"tile", 32}};
  e.median_us = median;
  e.mad_us = 0.1;
  e.samples = 15;
  e.throughput = 1.0;
  e.throughput_unit = "GB/s";
  e.plugin_name = "p";
  e.plugin_version = "0.1.0";
  e.plugin_build = "abc";
  e.tuned_at = when;
  return e;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::ArgumentError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("plans: defaults, per-problem overrides and errors with line numbers") {
  const kiln::Plan p = kiln::parse_plan(
      "strategy: anneal\n"
      "budget_evals: 40\n"
      "problems:\n"
      "  - {op: gemm, dtype: f32, shape: 4096x4096x4096}\n"
      "  - op: topk\n"
      "    shape: \"rows=64,n=1048576,k=64\"\n"
      "    strategy: exhaustive\n"
      "    budget_seconds: 30\n"
      "  - {op: reduce_sum, dtype: i32, shape: '268435456', device: host}\n",
      "t.yaml");
  CHECK(p.strategy == std::optional<std::string>("anneal"));
  CHECK(p.budget_evals == std::optional<std::size_t>(40));
  REQUIRE(p.problems.size() == 3);
  CHECK(p.problems[0].op == "gemm");
  CHECK(p.problems[0].shape == "4096x4096x4096");
  CHECK(p.problems[0].line == 4);
  CHECK(p.problems[1].strategy == std::optional<std::string>("exhaustive"));
  CHECK(p.problems[1].budget_seconds == std::optional<double>(30.0));
  CHECK(p.problems[2].dtype == kiln::i32);
  CHECK(p.problems[2].device == std::optional<std::string>("host"));

  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: gemm}\n", "a.yaml"); }).find("line 2: a problem needs `shape`") !=
        std::string::npos);
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: gemm, shape: 1x1x1, dtpe: f32}\n", "a.yaml"); })
            .find("unknown problem field 'dtpe'") != std::string::npos);
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: gemm, shape: 1x1x1, dtype: f33}\n", "a.yaml"); })
            .find("f33") != std::string::npos);
  CHECK(message_of([] { kiln::parse_plan("problems: [\n", "a.yaml"); }).find("invalid YAML") != std::string::npos);
  CHECK(message_of([] { kiln::parse_plan("budget_evals: -3\nproblems: []\n", "a.yaml"); }).find("positive") !=
        std::string::npos);
  CHECK(message_of([] { kiln::parse_plan("problem: []\n", "a.yaml"); }).find("unknown field 'problem'") != std::string::npos);
  // A key with no text (a list, a map or null) was named as "unknown field ''".
  CHECK(message_of([] { kiln::parse_plan("problems: []\n? [a, b]\n: 1\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 2: a key that is not a plain string (a list) where a field name belongs (expected problems, "
        "strategy, budget_evals, budget_seconds, name, description)");
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - op: add\n    shape: 4x4\n    {x: 1}: 2\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 4: a key that is not a plain string (a map) where a field name belongs (expected op, dtype, "
        "shape, device, strategy, budget_evals, budget_seconds)");
  CHECK(message_of([] { kiln::parse_plan("problems: []\n~: 1\n", "a.yaml"); }).find("line 2: a key that is not a plain string (null)") !=
        std::string::npos);
  // An unknown strategy was refused only at tune time, naming neither the plan nor the line.
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: add, shape: 4x4, strategy: bogus}\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 2: `strategy`: unknown strategy 'bogus': expected exhaustive, random or anneal");
  CHECK(message_of([] { kiln::parse_plan("strategy: anealing\nproblems:\n  - {op: add, shape: 4x4}\n", "a.yaml"); })
            .find("plan 'a.yaml' line 1: `strategy`: unknown strategy 'anealing'") != std::string::npos);
  // yaml-cpp kept the first of two equal keys, so {op: add, op: gemm} tuned add without a word.
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: add, op: gemm, shape: 4x4}\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 2: field 'op' is given twice");
  CHECK(message_of([] { kiln::parse_plan("strategy: random\nstrategy: anneal\nproblems: []\n", "a.yaml"); })
            .find("line 2: field 'strategy' is given twice") != std::string::npos);
  // A dtype of the wrong YAML type is named once, not with the plan and line twice.
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: add, shape: 4x4, dtype: [f32]}\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 2: `dtype` must be a dtype name");
}

TEST_CASE("problem lists: comments, devices, and errors") {
  TempDir dir;
  const std::string f = dir.file("p.txt", "# recorded\ngemm f32 m=64,n=64,k=64,tf32=0 cuda:0\n\nadd f32 m=1,n=7  # odd\n");
  const kiln::Plan p = kiln::load_problem_list(f);
  REQUIRE(p.problems.size() == 2);
  CHECK(p.problems[0].device == std::optional<std::string>("cuda:0"));
  CHECK(p.problems[1].op == "add");
  CHECK(p.problems[1].line == 4);
  CHECK_FALSE(p.problems[1].device);
  const std::string bad = dir.file("bad.txt", "gemm\n");
  CHECK(message_of([&] { kiln::load_problem_list(bad); }).find("line 1") != std::string::npos);
  CHECK_THROWS_AS(kiln::load_problem_list(dir.file("missing.txt")), kiln::ArgumentError);
}

TEST_CASE("plans and problem lists with escape sequences are refused without echoing them") {
  // A shape 'n=\x1b[2J' reached the terminal raw, in the error and in kiln tune's table.
  TempDir dir;
  const std::string list = dir.file("esc.txt", "add f32 m=4,n=4 host\nadd f32 m=4,n=\x1b[2J host\n");
  const std::string msg = message_of([&] { kiln::load_problem_list(list); });
  CHECK(msg == "problem list '" + list + "' line 2: a control character (byte 0x1b) at column 15; expected '<op> <dtype> "
               "<shape> [device]'");
  // YAML decodes "\e" to an ESC: the field itself is checked, and unknown keys are quoted safely.
  CHECK(message_of([] { kiln::parse_plan("problems:\n  - {op: add, shape: \"4x\\e[2J\"}\n", "a.yaml"); }) ==
        "plan 'a.yaml' line 2: `shape` '4x\\x1b[2J' holds a control character");
  const std::string unknown = message_of([] { kiln::parse_plan("\"x\\e[2J\": 1\nproblems: []\n", "a.yaml"); });
  CHECK(unknown.find('\x1b') == std::string::npos);
  CHECK(unknown.find("unknown field 'x\\x1b[2J'") != std::string::npos);
  // Tabs and CRLF line ends are ordinary text.
  CHECK(kiln::load_problem_list(dir.file("crlf.txt", "add\tf32 m=4,n=4\r\n")).problems.size() == 1);
}

TEST_CASE("a file that is no problem list is named, and its content is not echoed") {
  // `kiln tune --from /etc/shadow` printed the file's first line (a password hash) in its error.
  TempDir dir;
  const std::string shadow = dir.file("shadow", "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\nbin:*:19000::::::\n");
  std::string msg = message_of([&] { kiln::load_problem_list(shadow); });
  CHECK(msg == "problem list '" + shadow + "' line 1: expected '<op> <dtype> <shape> [device]', got a line of 1 word");
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"alice SECRET1 SECRET2\n", "line 1: expected '<op> <dtype> <shape> [device]': the second word is not a dtype "
                                   "(f32, f64, f16, bf16, i32, u32, u8, i64)"},
      {"al$ce f32 4x4\n", "line 1: expected '<op> <dtype> <shape> [device]': the first word is not an op name"},
      {"add f32 SECRET$HASH\n", "line 1: expected '<op> <dtype> <shape> [device]': the third word is not a shape"},
      {"add f32 4x4 SECRET/HASH\n", "line 1: expected '<op> <dtype> <shape> [device]': the fourth word is not a device"},
      {"user SECRET pass word more\n", "line 1: expected '<op> <dtype> <shape> [device]', got a line of 5 words"},
      {"add f32 4x4\n\xff\xfeSECRET x y\n", "line 2: expected '<op> <dtype> <shape> [device]': the first word is not an op"},
  };
  for (const auto& c : cases) {
    const std::string f = dir.file("list.txt", c.text);
    msg = message_of([&] { kiln::load_problem_list(f); });
    INFO(msg);
    CHECK(kiln_test::contains(msg, "problem list '" + f + "' " + c.expected));
    CHECK(!kiln_test::contains(msg, "SECRET"));
    CHECK(!kiln_test::contains(msg, "alice"));
  }
}

TEST_CASE("plans and databases nested past yaml-cpp's depth limit say so") {
  // yaml-cpp stops at 2000 levels with the message "bad file": kiln printed "invalid YAML: bad file".
  const std::string deep = std::string(3000, '[') + std::string(3000, ']');
  const std::string plan = message_of([&] { kiln::parse_plan("problems: " + deep + "\n", "deep.yaml"); });
  CHECK(plan.find("nested more than 2000 levels deep") != std::string::npos);
  CHECK(plan.find("bad file") == std::string::npos);
  std::string db = "(no error)";
  try {
    kiln::TuningDb::from_yaml("schema: 1\ndevices: " + deep + "\n", "deep.yaml");
  } catch (const kiln::Error& e) {
    db = e.what();
  }
  CHECK(db.find("nested more than 2000 levels deep") != std::string::npos);
}

TEST_CASE("plans and problem lists: a pipe nobody writes to reads as empty, a directory is named") {
  // An ifstream waited for a writer for ever: kiln tune --from FIFO and bench --regret hung.
  TempDir dir;
  const std::string fifo = (dir.path / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(kiln::load_problem_list(fifo).problems.empty());
  CHECK(message_of([&] { kiln::load_plan(fifo); }).find("expected a map with `problems:`") != std::string::npos);
  CHECK(message_of([&] { kiln::load_problem_list(dir.path.string()); }).find("is a directory") != std::string::npos);
  CHECK(message_of([&] { kiln::load_problem_list((dir.path / "absent.txt").string()); })
            .find("cannot open problem list") != std::string::npos);
}

TEST_CASE("the shipped default plan parses and names the kiln ops") {
  const kiln::Plan p = kiln::load_plan(KILN_SOURCE_DIR "/configs/plans/default.yaml");
  std::set<std::string> ops;
  for (const auto& item : p.problems) ops.insert(item.op);
  for (const char* op : {"add", "dot", "reduce_sum", "gemm", "gemv", "transpose", "histogram", "histogram_range", "topk"})
    CHECK(ops.count(op) == 1);
  CHECK(p.problems.size() >= 20);
}

TEST_CASE("find_plan: a path, else a shipped name, else an error") {
  TempDir dir;
  const std::string f = dir.file("mine.yaml", "problems: []\n");
  CHECK(kiln::find_plan(f) == f);
  CHECK_THROWS_AS(kiln::find_plan(dir.file("nope.yaml")), kiln::ArgumentError);
  // A directory (or a device) is there but is no plan: said so, not "no plan file".
  try {
    kiln::find_plan(dir.path);
    FAIL("a directory was taken for a plan");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()).find("is a directory, expected a plan .yaml file") != std::string::npos);
  }
  try {
    kiln::find_plan("/dev/null");
    FAIL("/dev/null was taken for a plan");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()).find("is not a regular file") != std::string::npos);
  }
}

TEST_CASE("db merge: lower median wins, or the newer with prefer_newer; update keeps other writers' entries") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningTable mine, theirs;
  mine["GPU|sm_90|132sm"]["gemm"]["f32|m=1"] = entry("fast_mine", 10.0, "2026-01-01T00:00:00Z");
  mine["GPU|sm_90|132sm"]["gemm"]["f32|m=2"] = entry("slow_mine", 30.0, "2026-01-01T00:00:00Z");
  theirs["GPU|sm_90|132sm"]["gemm"]["f32|m=1"] = entry("slow_theirs", 12.0, "2026-02-01T00:00:00Z");
  theirs["GPU|sm_90|132sm"]["gemm"]["f32|m=2"] = entry("fast_theirs", 20.0, "2026-02-01T00:00:00Z");
  theirs["GPU|sm_80|108sm"]["dot"]["f32|n=5"] = entry("other_device", 1.0, "2026-02-01T00:00:00Z");
  kiln::TuningDb::write_file(user, mine);

  kiln::TuningDb db({}, user);
  // Another process stores an entry after `db` read the file: update() must keep it.
  {
    kiln::TuningDb other({}, user);
    other.put("GPU|sm_90|132sm", "gemv", "f32|m=3|n=3", entry("from_other", 5.0, "2026-03-01T00:00:00Z"));
  }
  std::size_t changed = 0;
  db.update([&](kiln::TuningTable& t) { changed = kiln::merge_tables(t, theirs); });
  CHECK(changed == 2);  // m=2 replaced, dot added; m=1 kept
  const kiln::TuningTable merged = kiln::TuningDb::read_file(user);
  CHECK(merged.at("GPU|sm_90|132sm").at("gemm").at("f32|m=1").variant == "fast_mine");
  CHECK(merged.at("GPU|sm_90|132sm").at("gemm").at("f32|m=2").variant == "fast_theirs");
  CHECK(merged.at("GPU|sm_80|108sm").at("dot").at("f32|n=5").variant == "other_device");
  CHECK(merged.at("GPU|sm_90|132sm").at("gemv").at("f32|m=3|n=3").variant == "from_other");
  // The in-memory user layer follows the file.
  REQUIRE_FALSE(db.layers().empty());
  CHECK(db.layers().front().table == merged);

  db.update([&](kiln::TuningTable& t) { kiln::merge_tables(t, theirs, /*prefer_newer=*/true); });
  CHECK(kiln::TuningDb::read_file(user).at("GPU|sm_90|132sm").at("gemm").at("f32|m=1").variant == "slow_theirs");

  // A corrupt user file is left alone.
  const std::string corrupt = dir.file("corrupt.yaml", "schema: [\n");
  kiln::TuningDb bad({}, corrupt);
  CHECK_THROWS_AS(bad.update([](kiln::TuningTable&) {}), kiln::TuningDbError);
  std::ifstream in(corrupt);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "schema: [\n");
}
