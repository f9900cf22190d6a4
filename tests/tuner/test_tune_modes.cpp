// KILN_TUNE=lazy (tune on a database miss, store, run the winner) and KILN_TUNE=record (write
// each problem once for `kiln tune --from`).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include <sys/stat.h>

#include <kiln/tuner/plan.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

namespace fs = std::filesystem;
using kiln_test::last_run;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_modes_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

kiln::RuntimeOptions with_mode(const std::string& mode, const std::string& user_db) {
  kiln::RuntimeOptions o = kiln_test::offline_options(user_db);
  o.tune_mode = mode;
  return o;
}

void run_scale(kiln::Runtime& rt, std::int64_t n) {
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  for (std::int64_t i = 0; i < n; ++i) x.ref().as<float>()[i] = 0.5f * static_cast<float>(i);
  y.fill_bytes(0xFF);
  rt.op("scale")({x, y});
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(y.ref().as<float>()[i] == static_cast<float>(i));
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("lazy: a miss is tuned, stored, memoised and used; the next runtime reads it") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
  std::string variant;
  {
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("lazy", user));
    CHECK(rt.tune_mode() == "lazy");
    run_scale(rt, 96);
    const auto& schema = rt.registry().op("scale");
    const kiln::Problem p = schema.problem_from_shape(kiln::f32, "96", kiln::Device::host());
    const kiln::Decision& d = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host()));
    CHECK(d.from == kiln::Decision::From::tuned_now);
    variant = d.variant->name();
    CHECK(last_run().variant == variant);
    CHECK(last_run().config == d.config);
    const kiln::TuningTable t = kiln::TuningDb::read_file(user);
    REQUIRE(t.at(fp).at("scale").count("f32|n=96") == 1);
    CHECK(t.at(fp).at("scale").at("f32|n=96").variant == variant);
    // A repeat call is a memo hit: no second tuning run (the count of runs grows by one).
    const int before = last_run().count;
    run_scale(rt, 96);
    CHECK(last_run().count == before + 1);
  }
  kiln::Runtime off(kiln_test::scale_registry(), kiln_test::offline_options(user));
  const kiln::Decision d = off.explain(off.registry().op("scale").problem_from_shape(kiln::f32, "96", kiln::Device::host()));
  CHECK(d.from == kiln::Decision::From::database);
  CHECK(d.variant->name() == variant);
}

TEST_CASE("lazy: with no user database it says once that results are not kept") {
  // With no KILN_CACHE_DIR, XDG_CACHE_HOME or HOME there is no user file: every result was
  // dropped without a word and each process tuned the same problems again.
  auto messages = std::make_shared<std::vector<std::string>>();
  kiln::RuntimeOptions o = with_mode("lazy", "");
  o.log_callback = [messages](kiln::LogLevel level, std::string_view m) {
    if (level == kiln::LogLevel::warn) messages->emplace_back(m);
  };
  {
    kiln::Runtime rt(kiln_test::scale_registry(), o);
    run_scale(rt, 40);
    run_scale(rt, 48);
  }
  kiln::set_log_callback(nullptr);
  int said = 0;
  for (const std::string& m : *messages) said += kiln_test::contains(m, "KILN_TUNE=lazy: no user tuning database") ? 1 : 0;
  CHECK(said == 1);
}

TEST_CASE("lazy: a problem nothing supports still raises NoVariantError") {
  TempDir dir;
  kiln::Registry reg;
  reg.add_op(kiln_test::scale_schema());
  reg.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_even", 10, true));
  kiln::Runtime rt(std::move(reg), with_mode("lazy", dir.file("t.yaml")));
  CHECK_THROWS_AS(run_scale(rt, 7), kiln::NoVariantError);
}

TEST_CASE("record: each problem once, across runs, readable by load_problem_list") {
  TempDir dir;
  const std::string rec = dir.file("problems.txt");
  ::setenv("KILN_TUNE_RECORD_FILE", rec.c_str(), 1);
  {
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("record", ""));
    run_scale(rt, 8);
    run_scale(rt, 8);
    run_scale(rt, 10);
  }
  {
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("record", ""));
    run_scale(rt, 8);
    run_scale(rt, 12);
  }
  ::unsetenv("KILN_TUNE_RECORD_FILE");
  const auto lines = lines_of(rec);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "scale f32 n=8 host");
  CHECK(lines[1] == "scale f32 n=10 host");
  CHECK(lines[2] == "scale f32 n=12 host");
  const kiln::Plan plan = kiln::load_problem_list(rec);
  REQUIRE(plan.problems.size() == 3);
  CHECK(plan.problems[0].op == "scale");
  CHECK(plan.problems[0].dtype == kiln::f32);
  CHECK(plan.problems[0].shape == "n=8");
  CHECK(plan.problems[0].device == std::optional<std::string>("host"));
  // The shape reads back to the same key.
  auto s = kiln_test::scale_schema();
  CHECK(s->problem_from_shape(kiln::f32, plan.problems[2].shape, kiln::Device::host()).key() == "f32|n=12");
}

TEST_CASE("record: two runtimes alive at once write each problem once") {
  // Each Runtime read the file when it started and then kept its own set of written lines, so
  // two at once (or two processes) wrote every problem they shared twice.
  TempDir dir;
  const std::string rec = dir.file("problems.txt");
  ::setenv("KILN_TUNE_RECORD_FILE", rec.c_str(), 1);
  {
    kiln::Runtime a(kiln_test::scale_registry(), with_mode("record", ""));
    kiln::Runtime b(kiln_test::scale_registry(), with_mode("record", ""));
    run_scale(a, 8);
    run_scale(b, 8);
    run_scale(b, 10);
    run_scale(a, 10);
  }
  ::unsetenv("KILN_TUNE_RECORD_FILE");
  const auto lines = lines_of(rec);
  CHECK(lines == std::vector<std::string>{"scale f32 n=8 host", "scale f32 n=10 host"});
}

TEST_CASE("an unknown KILN_TUNE mode is refused") {
  CHECK_THROWS_AS(kiln::Runtime(kiln_test::scale_registry(), with_mode("eager", "")), kiln::ArgumentError);
}

TEST_CASE("RuntimeOptions::tune_mode is read in any case and its error names the option") {
  // The error said "KILN_TUNE='eager'" to a program that never set KILN_TUNE, and "RACE" was
  // refused here while KILN_TUNE=RACE is accepted.
  try {
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("eager\x1b[2J", ""));
    FAIL("accepted");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "RuntimeOptions::tune_mode = 'eager\\x1b[2J': expected off, race, lazy or record (empty: KILN_TUNE)");
  }
  kiln::Runtime rt(kiln_test::scale_registry(), with_mode("OFF", ""));
  CHECK(rt.tune_mode() == "off");
}

TEST_CASE("lazy: a budget from the environment outside its range is refused, not wrapped to 0") {
  // 1e30 evaluations converted to size_t was undefined and came out as a budget of 0.
  // Hex and spaces too: stod read "0x10" as 16 and " 5" as 5 (the command-line flags refuse both).
  for (const char* bad : {"1e30", "99999999999999999999", "2.5", "0", "-1", "nan", "abc", "0x10", " 5", "inf"}) {
    INFO(bad);
    ::setenv("KILN_TUNE_BUDGET_EVALS", bad, 1);
    try {
      kiln::Runtime rt(kiln_test::scale_registry(), with_mode("lazy", ""));
      FAIL("accepted");
    } catch (const kiln::ArgumentError& e) {
      CHECK(std::string(e.what()) == "KILN_TUNE_BUDGET_EVALS='" + std::string(bad) + "': expected an integer in [1, 1000000000]");
    }
  }
  // Quoted without its escape sequences (an ESC reached the terminal).
  ::setenv("KILN_TUNE_BUDGET_EVALS", "\x1b[2J", 1);
  try {
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("lazy", ""));
    FAIL("accepted");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()) == "KILN_TUNE_BUDGET_EVALS='\\x1b[2J': expected an integer in [1, 1000000000]");
  }
  ::setenv("KILN_TUNE_BUDGET_EVALS", "1000000000", 1);
  ::setenv("KILN_TUNE_BUDGET_SECONDS", "1e30", 1);
  CHECK_THROWS_AS(kiln::Runtime(kiln_test::scale_registry(), with_mode("lazy", "")), kiln::ArgumentError);
  ::setenv("KILN_TUNE_BUDGET_SECONDS", "0.5", 1);
  CHECK(kiln::Runtime(kiln_test::scale_registry(), with_mode("lazy", "")).tune_mode() == "lazy");
  ::unsetenv("KILN_TUNE_BUDGET_EVALS");
  ::unsetenv("KILN_TUNE_BUDGET_SECONDS");
}

TEST_CASE("record: a device or a pipe as the record file neither hangs nor fails op()") {
  // /dev/full was read for earlier lines for ever (a stream of NUL bytes, no newline, memory
  // growing); a pipe blocked the first op() until something read it.
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& file : {std::string("/dev/full"), std::string("/dev/zero"), fifo}) {
    INFO(file);
    ::setenv("KILN_TUNE_RECORD_FILE", file.c_str(), 1);
    kiln::Runtime rt(kiln_test::scale_registry(), with_mode("record", ""));
    run_scale(rt, 8);
    run_scale(rt, 9);
  }
  ::unsetenv("KILN_TUNE_RECORD_FILE");
}

// KILN_TUNE_RECORD_FILE naming a file that is not a problem list (a typo, a path copied from
// elsewhere) had problem lines appended to it, and a directory or a device was opened for
// writing: now only a regular file that is empty or a problem list is appended to; anything else
// is reported once, left as it was, and op() still runs.
TEST_CASE("record: a file that is no problem list, or no regular file, is never written") {
  TempDir dir;
  auto messages = std::make_shared<std::vector<std::string>>();
  auto options = [&] {
    kiln::RuntimeOptions o = with_mode("record", "");
    o.log_callback = [messages](kiln::LogLevel level, std::string_view m) {
      if (level == kiln::LogLevel::warn) messages->emplace_back(m);
    };
    return o;
  };
  auto said = [&](const std::string& text) {
    int n = 0;
    for (const std::string& m : *messages) n += kiln_test::contains(m, text) ? 1 : 0;
    return n;
  };

  const std::string notes = dir.file("notes.txt");
  const std::string text = "# my notes\nexport PATH=/opt/bin:$PATH\n";
  { std::ofstream(notes) << text; }
  ::setenv("KILN_TUNE_RECORD_FILE", notes.c_str(), 1);
  {
    kiln::Runtime rt(kiln_test::scale_registry(), options());
    run_scale(rt, 8);
    run_scale(rt, 9);
  }
  CHECK(lines_of(notes) == std::vector<std::string>{"# my notes", "export PATH=/opt/bin:$PATH"});
  CHECK(said("'" + notes + "' line 2 is not a problem list line (expected '<op> <dtype> <shape> [device]'") == 1);
  CHECK(said("it is not a problem list, so nothing is appended to it") == 1);

  // A directory at the path: named, nothing created in or next to it.
  messages->clear();
  const std::string sub = dir.file("sub");
  fs::create_directories(sub);
  ::setenv("KILN_TUNE_RECORD_FILE", sub.c_str(), 1);
  {
    kiln::Runtime rt(kiln_test::scale_registry(), options());
    run_scale(rt, 8);
  }
  CHECK(said("'" + sub + "' is not a regular file (a directory); nothing is recorded") == 1);
  CHECK(fs::is_empty(sub));

  // A problem list with comments and blank lines is one: appended to.
  messages->clear();
  const std::string list = dir.file("list.txt");
  { std::ofstream(list) << "# recorded by hand\n\nscale f32 n=8 host  # first\n"; }
  ::setenv("KILN_TUNE_RECORD_FILE", list.c_str(), 1);
  {
    kiln::Runtime rt(kiln_test::scale_registry(), options());
    run_scale(rt, 10);
  }
  ::unsetenv("KILN_TUNE_RECORD_FILE");
  CHECK(messages->empty());
  CHECK(lines_of(list).back() == "scale f32 n=10 host");
  CHECK(kiln::load_problem_list(list).problems.size() == 2);
}

// A read-only record file (or one in a read-only directory) was opened anyway when running as
// root, where access() and open() ignore the mode bits, and a missing directory was created.
// Now each is named once in a warning, nothing is written or created, and op() still runs.
TEST_CASE("record: a read-only file or directory, or a missing directory, is named; nothing is created") {
  TempDir dir;
  auto messages = std::make_shared<std::vector<std::string>>();
  auto options = [&] {
    kiln::RuntimeOptions o = with_mode("record", "");
    o.log_callback = [messages](kiln::LogLevel level, std::string_view m) {
      if (level == kiln::LogLevel::warn) messages->emplace_back(m);
    };
    return o;
  };
  auto said = [&](const std::string& text) {
    int n = 0;
    for (const std::string& m : *messages) n += kiln_test::contains(m, text) ? 1 : 0;
    return n;
  };
  auto record_into = [&](const std::string& file) {
    messages->clear();
    ::setenv("KILN_TUNE_RECORD_FILE", file.c_str(), 1);
    kiln::Runtime rt(kiln_test::scale_registry(), options());
    run_scale(rt, 9);
    run_scale(rt, 10);
    ::unsetenv("KILN_TUNE_RECORD_FILE");
  };
  const auto read_only = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;

  const std::string ro = dir.file("ro.txt");
  { std::ofstream(ro) << "scale f32 n=8 host\n"; }
  fs::permissions(ro, read_only);
  record_into(ro);
  CHECK(said("KILN_TUNE=record: '" + ro + "' is read-only (mode 0444): expected a file kiln may append to (chmod u+w "
             "it, or set KILN_TUNE_RECORD_FILE to another file); nothing is recorded") == 1);
  CHECK(messages->size() == 1);
  CHECK(lines_of(ro) == std::vector<std::string>{"scale f32 n=8 host"});

  const std::string ro_dir = dir.file("ro_dir");
  fs::create_directories(ro_dir);
  fs::permissions(ro_dir, read_only | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec);
  const std::string in_ro_dir = ro_dir + "/problems.txt";
  record_into(in_ro_dir);
  fs::permissions(ro_dir, fs::perms::owner_all);
  CHECK(said("KILN_TUNE=record: '" + in_ro_dir + "' cannot be created: its directory '" + ro_dir +
             "' is read-only (mode 0555): expected a directory kiln may create the file in; nothing is recorded") == 1);
  CHECK(!fs::exists(in_ro_dir));

  const std::string missing = dir.file("no/such/problems.txt");
  record_into(missing);
  CHECK(said("KILN_TUNE=record: '" + missing + "' cannot be created: its directory '" + dir.file("no/such") +
             "' does not exist (KILN_TUNE_RECORD_FILE does not create directories; create it first); nothing is "
             "recorded") == 1);
  CHECK(!fs::exists(dir.file("no")));

  // A writable file in an existing directory is still created and appended to.
  const std::string ok = dir.file("ok.txt");
  record_into(ok);
  CHECK(messages->empty());
  CHECK(lines_of(ok) == std::vector<std::string>{"scale f32 n=9 host", "scale f32 n=10 host"});
}
