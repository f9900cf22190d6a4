// TuningDb against a hostile or careless world (issue 8): planted symlinks, shared directories,
// stale temp files, locks held by others, oversized files and alias bombs, bad numbers, truncated
// files, unknown fields, control characters, and lazy loading.  Runs as root and as a normal user.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "kiln/errors.hpp"
#include "kiln/param_space.hpp"
#include "kiln/runtime.hpp"
#include "kiln/tuning_db.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using kiln_test::contains;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / ("kiln-db-hardening-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
    fs::permissions(path, fs::perms(0755));
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms(0755), ec);
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
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const kiln::TuningDbError& e) {
    return e.what();
  }
  return "";
}

const std::string kDev = "NVIDIA H200|sm_90|132sm";

kiln::TuningEntry entry(const std::string& variant, double median_us = 100.0) {
  kiln::TuningEntry e;
  e.variant = variant;
  e.config = kiln::Config{{"BM", 64}, {"BN", 128}};
  e.median_us = median_us;
  e.mad_us = 0.5;
  e.samples = 50;
  e.throughput = 12.25;
  e.throughput_unit = "TFLOP/s";
  e.plugin_name = "gemm";
  e.plugin_version = "0.1.0";
  e.plugin_build = "b1";
  e.tuned_at = "2026-11-21T10:00:00Z";
  return e;
}

std::string key(int n) { return "f32|m=" + std::to_string(n) + "|n=8|k=8"; }

bool is_symlink(const std::string& p) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(p, ec));
}

// As root, hands a planted link to another uid, as an attacker's would be; a normal user cannot,
// and the links are then the user's own (tests that need a foreign owner say so).
bool give_away(const std::string& link) {
  if (::geteuid() != 0) return false;
  return ::lchown(link.c_str(), 65534, 65534) == 0;
}

bool no_control_bytes(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

TEST_CASE("tuning db hardening: planted symlinks never redirect a write") {
  TempDir dir;
  const std::string victim = dir.file("victim.txt");
  spit(victim, "precious\n");
  ::chmod(victim.c_str(), 0600);
  const fs::path cache = dir.path / "cache";
  fs::create_directories(cache);
  const std::string user = (cache / "tuning.yaml").string();

  SECTION("a link at the temp file name the old code used") {
    // The old writer opened "<file>.tmp.<pid>" with O_CREAT|O_TRUNC and followed such a link.
    const std::string planted = user + ".tmp." + std::to_string(::getpid());
    fs::create_symlink(victim, planted);
    give_away(planted);
    kiln::TuningDb db({}, user);
    db.put(kDev, "gemm", key(8), entry("v8"));
    CHECK(slurp(victim) == "precious\n");
    CHECK(!is_symlink(user));
    CHECK(kiln::TuningDb::read_file(user).at(kDev).at("gemm").count(key(8)) == 1);
    CHECK(is_symlink(planted));  // not ours to remove, and harmless now
  }
  SECTION("a link at the lock file") {
    const std::string lock = user + ".lock";
    fs::create_symlink(victim, lock);
    give_away(lock);
    kiln::TuningDb db({}, user);
    const std::string msg = error_of([&] { db.put(kDev, "gemm", key(8), entry("v8")); });
    INFO(msg);
    CHECK(contains(msg, "symbolic link"));
    CHECK(contains(msg, lock));
    CHECK(slurp(victim) == "precious\n");
    CHECK(!fs::exists(user));
  }
  SECTION("a link to a missing file at the lock file") {
    const std::string lock = user + ".lock";
    const std::string made = dir.file("created-by-kiln");
    fs::create_symlink(made, lock);
    kiln::TuningDb db({}, user);
    CHECK(!error_of([&] { db.put(kDev, "gemm", key(8), entry("v8")); }).empty());
    CHECK(!fs::exists(made));  // O_CREAT through the link would have made it
  }
  SECTION("another user's link at the database itself") {
    fs::create_symlink(victim, user);
    if (!give_away(user)) {
      WARN("not root: cannot plant a link owned by another user; the user's own link is followed");
      return;
    }
    kiln::TuningDb db({}, user);
    REQUIRE(db.errors().size() == 1);
    CHECK(contains(db.errors()[0], "symbolic link owned by another user"));
    CHECK(!error_of([&] { db.put(kDev, "gemm", key(8), entry("v8")); }).empty());
    CHECK(slurp(victim) == "precious\n");
    CHECK(is_symlink(user));
  }
  SECTION("the user's own link is followed, and stays a link") {
    const std::string real = dir.file("dotfiles/tuning.yaml");
    fs::create_directories(dir.path / "dotfiles");
    kiln::TuningDb::write_file(real, {});
    fs::create_symlink(real, user);
    kiln::TuningDb db({}, user);
    REQUIRE(db.errors().empty());
    db.put(kDev, "gemm", key(8), entry("v8"));
    CHECK(is_symlink(user));
    CHECK(kiln::TuningDb::read_file(real).at(kDev).at("gemm").count(key(8)) == 1);
  }
}

TEST_CASE("tuning db hardening: a directory every user can write, without sticky bit, is refused") {
  TempDir dir;
  const fs::path cache = dir.path / "shared";
  fs::create_directories(cache);
  const std::string user = (cache / "tuning.yaml").string();
  kiln::TuningDb::write_file(user, {});
  ::chmod(cache.c_str(), 0777);
  kiln::TuningDb db({}, user);
  REQUIRE(db.errors().size() == 1);
  CHECK(contains(db.errors()[0], "writable by every user"));
  CHECK(contains(error_of([&] { db.put(kDev, "gemm", key(8), entry("v8")); }), "sticky"));
  CHECK(contains(error_of([&] { db.check_writable(); }), "sticky"));
  // With the sticky bit (like /tmp) others cannot replace our files: allowed.
  ::chmod(cache.c_str(), 01777);
  kiln::TuningDb sticky({}, user);
  CHECK(sticky.errors().empty());
  sticky.put(kDev, "gemm", key(8), entry("v8"));
  CHECK(kiln::TuningDb::read_file(user).at(kDev).at("gemm").size() == 1);
}

TEST_CASE("tuning db hardening: temp files a killed writer left are removed under the lock") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningDb db({}, user);
  db.put(kDev, "gemm", key(1), entry("v1"));
  const std::string dead_old_style = user + ".tmp.999999999";        // above any pid_max
  const std::string dead_new_style = user + ".tmp.999999998.0123abcd";
  const std::string live = user + ".tmp." + std::to_string(::getppid()) + ".feedbeef";
  const std::string live_but_ancient = user + ".tmp." + std::to_string(::getppid()) + ".0ld";
  const std::string mine = user + ".tmp." + std::to_string(::getpid()) + ".other-thread";
  const std::string not_ours = dir.file("other.yaml.tmp.999999999");
  const std::string dead_backup = user + ".bak.tmp.999999997.5eed";  // the .bak copy's writer
  for (const std::string& f : {dead_old_style, dead_new_style, live, live_but_ancient, mine, not_ours, dead_backup})
    spit(f, "schema: 1\n");
  const struct timespec two_hours_ago[2] = {{std::time(nullptr) - 7200, 0}, {std::time(nullptr) - 7200, 0}};
  REQUIRE(::utimensat(AT_FDCWD, live_but_ancient.c_str(), two_hours_ago, 0) == 0);

  db.put(kDev, "gemm", key(2), entry("v2"));
  CHECK(!fs::exists(dead_old_style));
  CHECK(!fs::exists(dead_new_style));
  CHECK(!fs::exists(live_but_ancient));  // a pid this old is a recycled one
  CHECK(!fs::exists(dead_backup));
  CHECK(fs::exists(live));               // its writer may still be running
  CHECK(fs::exists(mine));
  CHECK(fs::exists(not_ours));
  CHECK(kiln::TuningDb::read_file(user).at(kDev).at("gemm").size() == 2);
}

TEST_CASE("tuning db hardening: the file's mode survives a rewrite") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningDb db({}, user);
  db.put(kDev, "gemm", key(1), entry("v1"));
  REQUIRE(::chmod(user.c_str(), 0600) == 0);
  db.put(kDev, "gemm", key(2), entry("v2"));
  struct stat st {};
  REQUIRE(::stat(user.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::chmod(user.c_str(), 0640) == 0);
  db.prune([](auto&&...) { return true; });
  REQUIRE(::stat(user.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
}

TEST_CASE("tuning db hardening: a lock held by another process times out and names it") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Holds the lock inside update() for a while, like a slow writer.
    ::close(ready[0]);
    int status = 0;
    try {
      kiln::TuningDb holder({}, user);
      holder.update([&](kiln::TuningTable&) {
        if (::write(ready[1], "x", 1) != 1) throw std::runtime_error("pipe write failed");  // the parent then fails its read
        std::this_thread::sleep_for(std::chrono::seconds(3));
      });
    } catch (...) {
      status = 1;
    }
    ::_exit(status);
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  kiln::TuningDb db({}, user);
  db.set_lock_timeout(0.3);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { db.put(kDev, "gemm", key(1), entry("v1")); });
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(msg);
  CHECK(contains(msg, "locked by process " + std::to_string(child)));
  CHECK(contains(msg, "KILN_DB_LOCK_TIMEOUT"));
  CHECK(waited < 2.5);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  db.put(kDev, "gemm", key(1), entry("v1"));  // free again
}

TEST_CASE("tuning db hardening: set_lock_timeout refuses NaN and negative waits") {
  TempDir dir;
  kiln::TuningDb db({}, dir.file("tuning.yaml"));
  // NaN compares false with every wait, so a contended write would never give up.
  for (double bad : {std::nan(""), -1.0, -std::numeric_limits<double>::infinity()}) {
    INFO(bad);
    CHECK_THROWS_AS(db.set_lock_timeout(bad), kiln::ArgumentError);
    std::string msg;
    try {
      db.set_lock_timeout(bad);
    } catch (const kiln::ArgumentError& e) {
      msg = e.what();
    }
    CHECK(contains(msg, "set_lock_timeout"));
    CHECK(contains(msg, "seconds >= 0"));
  }
  CHECK_NOTHROW(db.set_lock_timeout(0.0));
  CHECK_NOTHROW(db.set_lock_timeout(std::numeric_limits<double>::infinity()));
  db.put(kDev, "gemm", key(1), entry("v1"));  // no contention: the wait does not matter
}

TEST_CASE("tuning db hardening: a mistyped KILN_DB_LOCK_TIMEOUT is reported, not ignored") {
  TempDir dir;
  ::setenv("KILN_DB_LOCK_TIMEOUT", "half a minute", 1);
  kiln::TuningDb db({}, dir.file("tuning.yaml"));
  bool named = false;
  for (const std::string& w : db.warnings()) named = named || contains(w, "KILN_DB_LOCK_TIMEOUT='half a minute' is not a number");
  ::unsetenv("KILN_DB_LOCK_TIMEOUT");
  CHECK(named);
  kiln::TuningDb quiet({}, dir.file("tuning.yaml"));
  CHECK(quiet.warnings().empty());
}

TEST_CASE("tuning db hardening: KILN_DB_LOCK_TIMEOUT takes decimal text only (no hex, no blanks)") {
  TempDir dir;
  for (const char* bad : {"0x10", " 5", "5 ", "0x1p3"}) {
    INFO(bad);
    ::setenv("KILN_DB_LOCK_TIMEOUT", bad, 1);
    kiln::TuningDb db({}, dir.file("tuning.yaml"));
    bool named = false;
    for (const std::string& w : db.warnings()) named = named || contains(w, "KILN_DB_LOCK_TIMEOUT='");
    CHECK(named);
  }
  for (const char* good : {"5", "0.5", "1e1", "+2"}) {
    INFO(good);
    ::setenv("KILN_DB_LOCK_TIMEOUT", good, 1);
    kiln::TuningDb db({}, dir.file("tuning.yaml"));
    CHECK(db.warnings().empty());
  }
  ::unsetenv("KILN_DB_LOCK_TIMEOUT");
}

TEST_CASE("tuning db hardening: check_writable finds an unusable database before tuning") {
  TempDir dir;
  kiln::TuningDb fine({}, dir.file("cache/tuning.yaml"));
  CHECK_NOTHROW(fine.check_writable());

  spit(dir.file("plainfile"), "x");
  kiln::TuningDb under_a_file({}, dir.file("plainfile/tuning.yaml"));
  CHECK(contains(error_of([&] { under_a_file.check_writable(); }), "plainfile"));

  spit(dir.file("corrupt.yaml"), "schema: 1\ndevices: {oops\n");
  kiln::TuningDb corrupt({}, dir.file("corrupt.yaml"));
  CHECK(contains(error_of([&] { corrupt.check_writable(); }), "corrupt.yaml"));

  kiln::TuningDb nowhere({}, "");
  CHECK(contains(error_of([&] { nowhere.check_writable(); }), "no user file"));
}

TEST_CASE("tuning db hardening: a directory at the database path is an error, not an empty layer") {
  TempDir dir;
  fs::create_directories(dir.path / "tuning.yaml");
  kiln::TuningDb db({dir.file("tuning.yaml")}, dir.file("tuning.yaml"));
  REQUIRE(db.errors().size() == 2);  // as the user file and as a shipped file
  CHECK(contains(db.errors()[0], "is a directory"));
  CHECK(contains(db.errors()[1], "is a directory"));
  CHECK(db.layers().empty());
  CHECK(!error_of([&] { db.put(kDev, "gemm", key(1), entry("v1")); }).empty());
  CHECK(contains(error_of([&] { kiln::TuningDb::read_file(dir.file("tuning.yaml")); }), "is a directory"));
}

TEST_CASE("tuning db hardening: the database is read on first use, not at start-up") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  spit(user, "schema: 1\ndevices: {oops\n");
  kiln::TuningDb db({}, user);
  CHECK(!db.loaded());
  CHECK(db.user_path() == user);
  CHECK(!db.loaded());
  CHECK(db.errors().size() == 1);
  CHECK(db.loaded());

  // A Runtime (what `kiln list` builds) does not read it either.
  std::vector<std::string> reported;
  kiln::Runtime rt(kiln::Registry{}, kiln_test::offline_options(user));
  CHECK(!rt.db().loaded());
  rt.db().set_reporter([&](const std::string& m, bool is_error) {
    CHECK(is_error);
    reported.push_back(m);
  });
  CHECK(rt.db().layers().empty());
  CHECK(rt.db().loaded());
  REQUIRE(reported.size() == 1);
  CHECK(contains(reported[0], user));
}

TEST_CASE("tuning db hardening: size, entry and alias limits") {
  TempDir dir;
  SECTION("a device that never ends") {
    const std::string msg = error_of([] { kiln::TuningDb::read_file("/dev/zero"); });
    CHECK(contains(msg, "/dev/zero"));
    CHECK(contains(msg, "limit"));
  }
  SECTION("a file over the size limit") {
    const std::string big = dir.file("big.yaml");
    {
      std::ofstream out(big, std::ios::binary);
      out << "schema: 1\n#";
      out << std::string(kiln::kTuningDbMaxFileBytes, 'x') << "\n";
    }
    const std::string msg = error_of([&] { kiln::TuningDb::read_file(big); });
    CHECK(contains(msg, big));
    CHECK(contains(msg, "limit"));
    kiln::TuningDb db({}, big);
    REQUIRE(db.errors().size() == 1);
    CHECK(contains(db.errors()[0], "limit"));
  }
  SECTION("too many entries") {
    std::string text = "schema: 1\ndevices:\n  d:\n    op:\n";
    for (std::size_t i = 0; i <= kiln::kTuningDbMaxEntries; ++i)
      text += "      k" + std::to_string(i) + ": {variant: v, config: {}}\n";
    const std::string msg = error_of([&] { kiln::TuningDb::from_yaml(text, "many.yaml"); });
    CHECK(contains(msg, "many.yaml"));
    CHECK(contains(msg, "entries"));
  }
  SECTION("aliases that stand for millions of entries") {
    // 200 devices x 200 ops x 200 keys = 8 million entries from a few KB.
    std::string text = "schema: 1\nx: &e {variant: v, config: {B: 1}}\nk: &k {";
    for (int i = 0; i < 200; ++i) text += (i ? ", " : "") + std::string("k") + std::to_string(i) + ": *e";
    text += "}\no: &o {";
    for (int i = 0; i < 200; ++i) text += (i ? ", " : "") + std::string("op") + std::to_string(i) + ": *k";
    text += "}\ndevices: {";
    for (int i = 0; i < 200; ++i) text += (i ? ", " : "") + std::string("d") + std::to_string(i) + ": *o";
    text += "}\n";
    const auto start = std::chrono::steady_clock::now();
    const std::string msg = error_of([&] { kiln::TuningDb::from_yaml(text, "bomb.yaml"); });
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    INFO(msg);
    CHECK(contains(msg, "bomb.yaml"));
    CHECK((contains(msg, "aliases") || contains(msg, "entries")));
  }
  SECTION("an alias bomb in a field kiln does not know") {
    std::string text = "schema: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 9; ++i) {
      text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
      for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + std::string("*a") + std::to_string(i - 1);
      text += "]\n";
    }
    text += "devices: {d: {op: {k: {variant: v, config: {}, blob: *a8}}}}\n";
    const std::string msg = error_of([&] { kiln::TuningDb::from_yaml(text, "laughs.yaml"); });
    CHECK(contains(msg, "laughs.yaml"));
    CHECK(contains(msg, "aliases"));
  }
}

TEST_CASE("tuning db hardening: one bad entry is skipped, named, and blocks nothing") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string head = "schema: 1\ndevices:\n  \"" + kDev + "\":\n    gemm:\n";
  const std::string good = "      \"f32|good=1\": {variant: v, config: {BM: 64}, median_us: 5, samples: 3}\n";
  struct Bad {
    const char* line;
    const char* says;
  };
  const Bad bad[] = {
      {"      \"f32|neg=1\": {variant: v, config: {BM: 64}, median_us: -1}\n", "median_us"},
      {"      \"f32|nan=1\": {variant: v, config: {BM: 64}, median_us: .nan}\n", "median_us"},
      {"      \"f32|inf=1\": {variant: v, config: {BM: 64}, mad_us: .inf}\n", "mad_us"},
      {"      \"f32|negsamples=1\": {variant: v, config: {BM: 64}, samples: -3}\n", "samples"},
      {"      \"f32|word=1\": {variant: v, config: {BM: 64}, median_us: fast}\n", "median_us"},
      {"      \"f32|novariant=1\": {config: {BM: 64}}\n", "variant"},
      {"      \"f32|noconfig=1\": {variant: v}\n", "config"},
      {"      \"f32|dup=1\": {variant: v, config: {BM: 64, BM: 32}}\n", "duplicate"},
      {"      \"f32|escape=1\": {variant: \"v\\e[31m\", config: {BM: 64}}\n", "variant"},
      {"      \"f32|badparam=1\": {variant: v, config: {\"B M\": 64}}\n", "parameter"},
      {"      \"f32|string=1\": just text\n", "entry"},
  };
  for (const Bad& b : bad) {
    spit(user, head + b.line + good);
    kiln::TuningDb db({}, user);
    INFO(b.line);
    REQUIRE(db.errors().empty());
    REQUIRE(db.warnings().size() == 1);
    INFO(db.warnings()[0]);
    CHECK(contains(db.warnings()[0], user));
    CHECK(contains(db.warnings()[0], "entry skipped"));
    CHECK(contains(db.warnings()[0], b.says));
    REQUIRE(db.layers().size() == 1);
    CHECK(db.layers()[0].table.at(kDev).at("gemm").size() == 1);
    CHECK(db.layers()[0].table.at(kDev).at("gemm").count("f32|good=1") == 1);
    db.put(kDev, "gemm", key(1), entry("v1"));  // the bad entry does not block writes
    const kiln::TuningTable after = kiln::TuningDb::read_file(user);
    CHECK(after.at(kDev).at("gemm").size() == 2);
  }
  // Entries handed to put() are checked the same way.
  kiln::TuningDb db({}, dir.file("other.yaml"));
  kiln::TuningEntry nan = entry("v");
  nan.median_us = std::numeric_limits<double>::quiet_NaN();
  CHECK(contains(error_of([&] { db.put(kDev, "gemm", key(1), nan); }), "median_us"));
  CHECK(contains(error_of([&] { db.put(kDev, "gemm\x1b[2J", key(1), entry("v")); }), "\\x1b"));
}

TEST_CASE("tuning db hardening: an entry whose key is no problem key is skipped and named") {
  // "bogus" and "f32|m=abc" are no problem's key: they were listed as ok by kiln db show and never
  // used; "f32|m=1|m=2" was read as a key with two m dims.
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string head = "schema: 1\ndevices:\n  \"" + kDev + "\":\n    gemm:\n";
  const std::string good = "      \"f32|m=1|n=8|k=8\": {variant: v, config: {BM: 64}, median_us: 5, samples: 3}\n";
  struct Bad {
    const char* key;
    const char* says;
  };
  const Bad bad[] = {
      {"bogus", "does not start with a dtype name"},
      {"f99|m=1", "does not start with a dtype name"},
      {"f32|m=abc|n=8", "is not dtype|name=integer"},
      {"f32|m=1e400", "is not dtype|name=integer"},
      {"f32|m=99999999999999999999", "is not dtype|name=integer"},
      {"f32|m", "is not dtype|name=integer"},
      {"f32|m=1|m=2", "gives dim 'm' twice"},
      {"f32|m n=1", "is not a name"},
  };
  for (const Bad& b : bad) {
    spit(user, head + "      \"" + b.key + "\": {variant: v, config: {BM: 64}, median_us: 1}\n" + good);
    kiln::TuningDb db({}, user);
    INFO(b.key);
    REQUIRE(db.errors().empty());
    REQUIRE(db.warnings().size() == 1);
    INFO(db.warnings()[0]);
    CHECK(contains(db.warnings()[0], user));
    CHECK(contains(db.warnings()[0], "entry skipped"));
    CHECK(contains(db.warnings()[0], b.says));
    REQUIRE(db.layers().size() == 1);
    CHECK(db.layers()[0].table.at(kDev).at("gemm").size() == 1);
    CHECK(contains(error_of([&] { db.put(kDev, "gemm", b.key, entry("v")); }), b.says));
  }
}

TEST_CASE("tuning db hardening: a repeated top-level key is an error, not a silently dropped block") {
  // `cat a.yaml b.yaml > c.yaml`: yaml-cpp kept the first `devices:`, the second file's entries
  // were dropped without a warning, and the next put() rewrote the file without them (no .bak).
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string one = "entries: 1\nschema: 1\ndevices:\n  \"" + kDev +
                          "\":\n    gemm:\n      \"f32|m=1|n=8|k=8\": {variant: v, config: {BM: 64}, median_us: 5}\n";
  const std::string two = "entries: 1\nschema: 1\ndevices:\n  \"" + kDev +
                          "\":\n    gemm:\n      \"f32|m=2|n=8|k=8\": {variant: v, config: {BM: 64}, median_us: 5}\n";
  spit(user, one + two);
  kiln::TuningDb db({}, user);
  (void)db.layers();
  REQUIRE(db.errors().size() == 1);
  INFO(db.errors()[0]);
  CHECK(contains(db.errors()[0], user + "' line 7: top-level key 'entries' is repeated"));
  CHECK(contains(db.errors()[0], "kiln db merge"));
  CHECK_FALSE(error_of([&] { db.put(kDev, "gemm", key(3), entry("v3")); }).empty());  // never rewritten
  CHECK(slurp(user) == one + two);
}

TEST_CASE("tuning db hardening: a file cut at any line is noticed, and its valid entries kept") {
  TempDir dir;
  kiln::TuningTable t;
  for (int i = 1; i <= 3; ++i) t[kDev]["gemm"][key(i)] = entry("v" + std::to_string(i), i);
  t["host-cpu|host|4t"]["reduce_sum"]["f32|n=7"] = entry("r");
  const std::string text = kiln::TuningDb::to_yaml(t);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    if (text[i] == '\n') cuts.push_back(i + 1);
  REQUIRE(cuts.size() > 20);
  for (std::size_t cut : cuts) {
    const std::string prefix = text.substr(0, cut);
    INFO(prefix);
    std::vector<std::string> warnings;
    kiln::TuningTable back;
    try {
      back = kiln::TuningDb::from_yaml(prefix, "cut.yaml", &warnings);
    } catch (const kiln::TuningDbError& e) {
      CHECK(contains(e.what(), "cut.yaml"));  // noticed as an error (nothing valid in it yet)
      continue;
    }
    CHECK(!warnings.empty());
    for (const auto& [dev, ops] : back)
      for (const auto& [op, keys] : ops)
        for (const auto& [k, e] : keys) CHECK(e == t.at(dev).at(op).at(k));
  }
  std::vector<std::string> warnings;
  CHECK(kiln::TuningDb::from_yaml(text, "whole.yaml", &warnings) == t);
  CHECK(warnings.empty());
  // Hand-written files (no `entries:`) are not held to it.
  CHECK(kiln::TuningDb::from_yaml("schema: 1\ndevices: {d: {op: {\"f32|k=1\": {variant: v, config: {}}}}}\n", "hand", &warnings)
            .size() == 1);
  CHECK(warnings.empty());
}

TEST_CASE("tuning db hardening: fields this kiln does not know survive a rewrite") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  spit(user,
       "schema: 1\n"
       "comment: tuned on the lab machine\n"
       "devices:\n"
       "  \"" + kDev + "\":\n"
       "    gemm:\n"
       "      \"" + key(1) + "\":\n"
       "        variant: v1\n"
       "        config: {BM: 64}\n"
       "        energy_uj: 12.5\n"
       "        notes: [fast, stable]\n"
       "        plugin: {name: gemm, version: 0.1.0, build: b1, arch: sm_90}\n");
  kiln::TuningDb db({}, user);
  REQUIRE(db.warnings().empty());
  const kiln::TuningEntry e = db.layers().at(0).table.at(kDev).at("gemm").at(key(1));  // a copy: put() replaces the layer
  REQUIRE(e.extra_fields.size() == 2);
  CHECK(e.extra_fields[0].first == "energy_uj");
  db.put(kDev, "gemm", key(2), entry("v2"));
  const std::string text = slurp(user);
  INFO(text);
  CHECK(contains(text, "comment: tuned on the lab machine"));
  CHECK(contains(text, "energy_uj: 12.5"));
  CHECK(contains(text, "fast"));
  CHECK(contains(text, "arch: sm_90"));
  const kiln::TuningTable back = kiln::TuningDb::read_file(user);
  CHECK(back.at(kDev).at("gemm").at(key(1)) == e);
}

TEST_CASE("tuning db hardening: config key order does not matter") {
  const kiln::Config a{{"block", 128}, {"unroll", 4}};
  const kiln::Config b{{"unroll", 4}, {"block", 128}};
  CHECK(a == b);
  CHECK(!(a < b));
  CHECK(!(b < a));
  CHECK(a != kiln::Config{{"unroll", 4}, {"block", 64}});
  CHECK(a != kiln::Config{{"block", 128}});
  kiln::ParamSpace space;
  space.param("block", {64, 128}).param("unroll", {1, 4});
  CHECK(space.contains(b));
  kiln::Problem p;
  CHECK(!space.violated(b, kiln::DeviceInfo{}, p));
  CHECK(space.violated(kiln::Config{{"unroll", 4}, {"block", 96}}, kiln::DeviceInfo{}, p));
  const kiln::TuningTable t = kiln::TuningDb::from_yaml(
      "schema: 1\ndevices: {d: {op: {\"f32|k=1\": {variant: v, config: {unroll: 4, block: 128}}}}}\n", "order");
  CHECK(t.at("d").at("op").at("f32|k=1").config == a);
}

TEST_CASE("tuning db hardening: text from a file reaches messages escaped") {
  const std::string text =
      "schema: 1\ndevices:\n  \"evil\\e]0;pwned\\a|sm_90|1sm\": {op: {\"f32|k=1\": {variant: v, config: {}}}}\n"
      "  \"ok|sm_90|1sm\": {\"op\\e[2J\": {k: {variant: v, config: {}}}, op: {\"key\\x9b\": {variant: v, config: {}}}}\n";
  std::vector<std::string> warnings;
  const kiln::TuningTable t = kiln::TuningDb::from_yaml(text, "evil.yaml", &warnings);
  CHECK(t.count("ok|sm_90|1sm") == 1);
  CHECK(t.size() == 1);
  REQUIRE(warnings.size() == 3);
  for (const std::string& w : warnings) {
    INFO(w);
    CHECK(no_control_bytes(w));
  }
  CHECK(contains(warnings[0], "\\x1b]0;pwned\\x07"));
  // Every string that loads is printable ASCII.
  const std::string bad_yaml = "schema: 1\ndevices: {d: {op: {\"f32|k=1\": {variant: v, config: {}, tuned_at: \"\\xff\\x01\"}}}}\n";
  warnings.clear();
  CHECK(kiln::TuningDb::from_yaml(bad_yaml, "bytes.yaml", &warnings).at("d").at("op").empty());
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0], "tuned_at"));
}

TEST_CASE("tuning db hardening: a path without a file name is refused before anything is created") {
  // "dir/" made put() create the directory and a stray "dir/.lock" before it failed, and
  // write_file("") blamed a temp file ('./.tmp.<pid>...') the caller never named.
  TempDir dir;
  const std::string slash = dir.file("newdir") + "/";
  for (const std::string& path : {slash, std::string(""), dir.file("newdir") + "/.", dir.file("x") + "/.."}) {
    INFO("path '" << path << "'");
    kiln::TuningDb db({}, path);
    const std::string put_error = error_of([&] { db.put(kDev, "gemm", key(1), entry("v1")); });
    CHECK(!put_error.empty());
    const std::string write_error = error_of([&] { kiln::TuningDb::write_file(path, {}); });
    CHECK((contains(write_error, "expected a database file") || contains(write_error, "is empty")));
    CHECK_FALSE(contains(write_error, ".tmp."));
  }
  CHECK_FALSE(fs::exists(dir.file("newdir")));
  CHECK_FALSE(fs::exists(dir.file("x")));
  kiln::TuningDb db({}, slash);
  CHECK(contains(error_of([&] { db.put(kDev, "gemm", key(1), entry("v1")); }), "expected a database file name"));
}

TEST_CASE("tuning db hardening: a file of only comments is kept as .bak before a rewrite") {
  // It parsed as an empty database, so put() (or kiln db merge --into it) replaced the comments
  // without a word and without a copy.
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string text = "# notes on this machine's tuning, kept by hand\n# do not lose me\n";
  spit(user, text);
  kiln::TuningDb db({}, user);
  REQUIRE(db.warnings().size() == 1);
  CHECK(contains(db.warnings().front(), "only comments"));
  db.put(kDev, "gemm", key(1), entry("v1"));
  CHECK(slurp(user + ".bak") == text);
  CHECK(kiln::TuningDb::read_file(user).at(kDev).at("gemm").size() == 1);
  // An empty file (touch) has nothing to lose: no warning, no copy.
  const std::string empty = dir.file("empty.yaml");
  spit(empty, " \n");
  kiln::TuningDb fresh({}, empty);
  CHECK(fresh.warnings().empty());
  fresh.put(kDev, "gemm", key(1), entry("v1"));
  CHECK_FALSE(fs::exists(empty + ".bak"));
}

TEST_CASE("tuning db hardening: a rewrite that leaves out an unreadable entry keeps the old file as .bak") {
  // A hand-edited entry with a typo (median_us: fast) was skipped on reading, as it should be,
  // and then gone for good: the next put() rewrote the file without it.
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  const std::string text = "schema: 1\ndevices:\n  \"" + kDev + "\":\n    gemm:\n" +
                           "      \"f32|typo=1\": {variant: v, config: {BM: 64}, median_us: fast}\n" +
                           "      \"f32|good=1\": {variant: v, config: {BM: 64}, median_us: 5, samples: 3}\n";
  spit(user, text);
  {
    std::vector<std::string> reported;
    kiln::TuningDb db({}, user);
    db.set_reporter([&](const std::string& m, bool) { reported.push_back(m); });
    db.put(kDev, "gemm", key(1), entry("v1"));
    CHECK(slurp(user + ".bak") == text);  // byte for byte, the typo with it
    REQUIRE_FALSE(db.warnings().empty());
    INFO(db.warnings().back());
    CHECK(contains(db.warnings().back(), user + ".bak"));
    CHECK(contains(db.warnings().back(), "rewritten with only what could be read"));
    CHECK(std::find(reported.begin(), reported.end(), db.warnings().back()) != reported.end());
    const kiln::TuningTable after = kiln::TuningDb::read_file(user);
    CHECK(after.at(kDev).at("gemm").size() == 2);  // good + key(1)
  }
  // A clean file is rewritten without a copy; prune keeps a copy too when it rewrites.
  fs::remove(user + ".bak");
  {
    kiln::TuningDb db({}, user);
    db.put(kDev, "gemm", key(2), entry("v2"));
    CHECK_FALSE(fs::exists(user + ".bak"));
  }
  spit(user, text);
  {
    kiln::TuningDb db({}, user);
    CHECK(db.prune([](const std::string&, const std::string&, const std::string& k, const kiln::TuningEntry&) {
            return k == "f32|good=1";
          }) == 1);
    CHECK(slurp(user + ".bak") == text);
  }
}

// A directory on KILN_CONFIG_PATH: its *.yaml entries that are no readable file (a link to
// nothing, a loop of links, a directory) were left out without a word; each is now named with the
// reason, and the good files beside it still load.
TEST_CASE("tuning db hardening: odd *.yaml entries of a config directory are reported, the rest load") {
  TempDir dir;
  spit(dir.file("a.yaml"), "schema: 1\ndevices: {}\n");
  spit(dir.file("z.yaml"), "schema: 1\ndevices: {}\n");
  fs::create_symlink(dir.file("gone.yaml.orig"), dir.path / "broken.yaml");
  fs::create_symlink("loop.yaml", dir.path / "loop.yaml");
  fs::create_directories(dir.path / "sub.yaml");
  fs::create_symlink(dir.file("gone.txt"), dir.path / "notes.txt");  // not *.yaml: not ours to judge

  const char* old = std::getenv("KILN_CONFIG_PATH");
  const std::string saved = old ? old : "";
  ::setenv("KILN_CONFIG_PATH", dir.path.string().c_str(), 1);
  const std::vector<std::string> paths = kiln::TuningDb::default_shipped_paths();
  if (old) ::setenv("KILN_CONFIG_PATH", saved.c_str(), 1);
  else ::unsetenv("KILN_CONFIG_PATH");
  CHECK(paths == std::vector<std::string>{dir.file("a.yaml"), dir.file("broken.yaml"), dir.file("loop.yaml"),
                                          dir.file("sub.yaml"), dir.file("z.yaml")});

  kiln::TuningDb db(paths, "");
  std::vector<std::string> reported;
  db.set_reporter([&](const std::string& message, bool) { reported.push_back(message); });
  REQUIRE(db.errors().size() == 3);
  auto reported_as = [&](const std::string& text) {
    return std::count_if(db.errors().begin(), db.errors().end(), [&](const std::string& e) { return contains(e, text); });
  };
  CHECK(reported_as("'" + dir.file("broken.yaml") + "': is a symbolic link to a file that does not exist ('" +
                    dir.file("gone.yaml.orig") + "')") == 1);
  CHECK(reported_as("'" + dir.file("loop.yaml") + "': is a symbolic link in a loop of links ('loop.yaml')") == 1);
  CHECK(reported_as("'" + dir.file("sub.yaml") + "': is a directory, not a database file") == 1);
  CHECK(reported.size() == 3);
  REQUIRE(db.layers().size() == 2);
  CHECK(db.layers()[0].path == dir.file("z.yaml"));
  CHECK(db.layers()[1].path == dir.file("a.yaml"));
}

// A user file its owner made read-only (chmod a-w) was replaced all the same: the write renames a
// new file over it, which needs only the directory's permission.  Now every write refuses it,
// naming the file and the mode, before tuning (check_writable) and before a .bak copy is made;
// the file is left as it was.
TEST_CASE("tuning db hardening: a read-only user file is refused, not replaced") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  {
    kiln::TuningDb db({}, user);
    db.put(kDev, "gemm", key(1), entry("v1"));
  }
  REQUIRE(::chmod(user.c_str(), 0444) == 0);
  const std::string before = slurp(user);
  kiln::TuningDb db({}, user);
  const std::string why = "is read-only (mode 0444): kiln does not replace a file its owner made read-only";
  CHECK(contains(error_of([&] { db.check_writable(); }), why));
  CHECK(contains(error_of([&] { db.put(kDev, "gemm", key(2), entry("v2")); }), "'" + user + "': " + why));
  CHECK(contains(error_of([&] { db.update([](kiln::TuningTable& t) { t.clear(); }); }), why));
  CHECK(contains(error_of([&] { db.prune([](auto&&...) { return true; }); }), why));
  CHECK(contains(error_of([&] { kiln::TuningDb::write_file(user, {}); }), why));
  CHECK(slurp(user) == before);
  CHECK(!fs::exists(user + ".bak"));
  struct stat st {};
  REQUIRE(::stat(user.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0444);
  // Reading it is fine, and so is writing again once it is writable.
  CHECK(db.layers().size() == 1);
  REQUIRE(::chmod(user.c_str(), 0644) == 0);
  CHECK(error_of([&] { db.put(kDev, "gemm", key(2), entry("v2")); }).empty());

  // Through a link the user owns: the message names the file the link leads to.
  const std::string real = dir.file("real.yaml");
  REQUIRE(::rename(user.c_str(), real.c_str()) == 0);
  fs::create_symlink(real, user);
  REQUIRE(::chmod(real.c_str(), 0400) == 0);
  CHECK(contains(error_of([&] { db.check_writable(); }), "is read-only ('" + real + "') (mode 0400)"));
}

// Paths reach messages with their control characters escaped: a *.yaml name found in a config
// directory (anyone who can write there picks it) or a KILN_CACHE_DIR with an escape sequence was
// printed raw to the terminal.  UTF-8 text and backslashes are kept as they are.
TEST_CASE("tuning db hardening: paths in messages carry no control characters") {
  TempDir dir;
  const std::string odd = dir.file("x\x1b]0;pwned\x07\xc2\x9b" "2J.yaml");
  fs::create_directories(odd);  // a directory named like a database: reported with its name
  const std::string cafe = dir.file("caf\xc3\xa9\\.yaml");
  kiln::TuningDb db({odd, cafe}, "");
  REQUIRE(db.errors().size() == 2);
  for (const std::string& e : db.errors()) {
    INFO(e);
    CHECK(no_control_bytes(e));
    CHECK(e.find("\xc2\x9b") == std::string::npos);
  }
  const std::string both = db.errors()[0] + "\n" + db.errors()[1];
  CHECK(contains(both, "x\\x1b]0;pwned\\x07\\xc2\\x9b2J.yaml': is a directory"));
  CHECK(contains(both, "caf\xc3\xa9\\.yaml': cannot open"));
  // A user file that cannot be read: its path escaped too.
  const std::string user = dir.file("user\x1b[31m.yaml");
  fs::create_directories(user);
  kiln::TuningDb db2({}, user);
  REQUIRE(db2.errors().size() == 1);
  CHECK(no_control_bytes(db2.errors()[0]));
  CHECK(contains(db2.errors()[0], "user\\x1b[31m.yaml"));
}

TEST_CASE("tuning db hardening: put() refuses extra fields the next read would skip or drop") {
  // TuningEntry::extra_fields (a newer kiln's fields, written back as they came) named like one of
  // kiln's own fields made put() write an entry that the next read skipped ("duplicate key
  // 'variant'"): the tuned result was gone.  Text that is not YAML was dropped without a word.
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningDb db({}, user);
  db.put(kDev, "gemm", key(1), entry("v1"));
  auto refused = [&](kiln::TuningEntry e) { return error_of([&] { db.put(kDev, "gemm", key(2), e); }); };
  kiln::TuningEntry own = entry("v2");
  own.extra_fields.emplace_back("variant", "zzz");
  const std::string own_msg = refused(own);
  CHECK(contains(own_msg, "extra field 'variant'"));
  CHECK(contains(own_msg, "kiln's own fields"));
  kiln::TuningEntry alternatives = entry("v2");
  alternatives.extra_fields.emplace_back("alternatives", "[]");
  CHECK(contains(refused(alternatives), "extra field 'alternatives'"));
  kiln::TuningEntry twice = entry("v2");
  twice.extra_fields = {{"speedup", "2"}, {"speedup", "3"}};
  CHECK(contains(refused(twice), "given twice"));
  kiln::TuningEntry not_a_name = entry("v2");
  not_a_name.extra_fields.emplace_back("two words", "1");
  CHECK(contains(refused(not_a_name), "not a field name"));
  kiln::TuningEntry not_yaml = entry("v2");
  not_yaml.extra_fields.emplace_back("notes", "[unclosed");
  CHECK(contains(refused(not_yaml), "not YAML"));
  kiln::TuningEntry plugin_own = entry("v2");
  plugin_own.extra_plugin_fields.emplace_back("build", "b9");
  CHECK(contains(refused(plugin_own), "extra plugin field 'build'"));
  // Nothing refused reached the file, and the entry already there still reads.
  const kiln::TuningTable table = kiln::TuningDb::read_file(user);
  CHECK(table.at(kDev).at("gemm").size() == 1);
  CHECK(table.at(kDev).at("gemm").count(key(1)) == 1);
  // A field kiln does not know, under a name of its own, is stored and read back.
  kiln::TuningEntry newer = entry("v2");
  newer.extra_fields.emplace_back("speedup", "{vs: cublas, x: 1.5}");
  newer.extra_plugin_fields.emplace_back("commit", "abc123");
  db.put(kDev, "gemm", key(2), newer);
  std::vector<std::string> warnings;
  const kiln::TuningTable back = kiln::TuningDb::read_file(user, &warnings);
  CHECK(warnings.empty());
  REQUIRE(back.at(kDev).at("gemm").count(key(2)) == 1);
  const kiln::TuningEntry& read = back.at(kDev).at("gemm").at(key(2));
  REQUIRE(read.extra_fields.size() == 1);
  CHECK(read.extra_fields[0].first == "speedup");
  REQUIRE(read.extra_plugin_fields.size() == 1);
  CHECK(read.extra_plugin_fields[0].first == "commit");
}

namespace {

// The names in a directory, sorted: a refused write must leave no temp file behind.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("tuning db hardening: a write over the entry or size limit is refused and the file kept") {
  // The reader refuses a file of more than kTuningDbMaxEntries entries or kTuningDbMaxFileBytes
  // bytes, but update() (kiln db merge, the tuner's store) and write_file() wrote such files: the
  // next read refused the whole database, every entry in it as good as lost.
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningDb db({}, user);
  db.put(kDev, "gemm", key(1), entry("v1"));
  const std::string before = slurp(user);
  const std::vector<std::string> names_before = names_in(dir.path);
  auto file_kept = [&] {
    const bool same_bytes = slurp(user) == before;  // not CHECK(a == b): Catch would print 16 MiB
    CHECK(same_bytes);
    CHECK(names_in(dir.path) == names_before);
    // The in-memory layer did not take the refused table either.
    REQUIRE(!db.layers().empty());
    CHECK(db.layers().front().writable);
    CHECK(db.layers().front().table.at(kDev).at("gemm").size() == 1);
    CHECK(kiln::TuningDb::read_file(user).at(kDev).at("gemm").count(key(1)) == 1);
  };

  SECTION("one entry over the limit") {
    const auto start = std::chrono::steady_clock::now();
    const std::string msg = error_of([&] {
      db.update([](kiln::TuningTable& table) {
        auto& keys = table[kDev]["gemm"];
        for (int i = 2; keys.size() <= kiln::kTuningDbMaxEntries; ++i) keys.emplace(key(i), entry("v1"));
      });
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(msg << " (" << seconds << " s)");
    CHECK(seconds < 5.0);
    CHECK(contains(msg, "tuning database '" + user + "'"));
    CHECK(contains(msg, "would hold " + std::to_string(kiln::kTuningDbMaxEntries + 1) + " entries"));
    CHECK(contains(msg, "limit of " + std::to_string(kiln::kTuningDbMaxEntries)));
    CHECK(contains(msg, "left as it was"));
    file_kept();
  }
  SECTION("text over the size limit") {
    // One entry under a device key longer than the limit (written double-quoted: the quickest
    // text for yaml-cpp's emitter; a long unknown field took 8 s).
    const auto start = std::chrono::steady_clock::now();
    const std::string msg = error_of([&] { db.put(std::string(kiln::kTuningDbMaxFileBytes, 'd'), "gemm", key(2), entry("v2")); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 5.0);
    INFO(msg.substr(0, 300) << " (" << seconds << " s)");
    CHECK(contains(msg, "tuning database '" + user + "'"));
    CHECK(contains(msg, "bytes, more than the limit of " + std::to_string(kiln::kTuningDbMaxFileBytes) + " bytes"));
    CHECK(contains(msg, "left as it was"));
    file_kept();
  }
  SECTION("write_file, to a file that does not exist yet") {
    kiln::TuningTable table;
    auto& keys = table[kDev]["gemm"];
    for (int i = 1; keys.size() <= kiln::kTuningDbMaxEntries; ++i) keys.emplace(key(i), entry("v1"));
    const std::string other = dir.file("other.yaml");
    const std::string msg = error_of([&] { kiln::TuningDb::write_file(other, table); });
    CHECK(contains(msg, "tuning database '" + other + "'"));
    CHECK(contains(msg, std::to_string(kiln::kTuningDbMaxEntries + 1) + " entries"));
    CHECK(!fs::exists(other));
    file_kept();
  }
}

TEST_CASE("tuning db hardening: reload() from inside the reporter is refused, not a hang") {
  // The reporter runs while the files are read, under the load lock: reload() from inside it
  // locked the same mutex again on the same thread and hung.
  TempDir dir;
  kiln::TuningDb db({dir.file("missing.yaml")}, "");
  std::vector<std::string> reported, refused;
  db.set_reporter([&](const std::string& m, bool is_error) {
    reported.push_back(m);
    if (!is_error) return;
    try {
      db.reload();
    } catch (const kiln::ArgumentError& e) {
      refused.push_back(e.what());
    }
  });
  // Off the test's thread, so that a hang fails the test instead of stalling the suite.
  auto done = std::async(std::launch::async, [&] { return db.errors().size(); });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    std::fprintf(stderr, "TuningDb::reload from inside the reporter hung\n");
    std::_Exit(1);  // the hung thread cannot be joined
  }
  CHECK(done.get() == 1);
  REQUIRE(reported.size() == 1);
  CHECK(contains(reported[0], "missing.yaml"));
  REQUIRE(refused.size() == 1);
  CHECK(contains(refused[0], "TuningDb::reload"));
  CHECK(contains(refused[0], "reporter"));
  // Outside the reporter, reload() works as before (and reports again).
  refused.clear();
  db.reload();
  CHECK(reported.size() == 2);
  CHECK(refused.size() == 1);
}
