// KILN_TUNE modes: the tuner's side (the core finds kiln_tuner_install_tune_mode at run time).
//
// lazy: on a database miss, Dispatcher::decide calls the miss handler installed here, on the
// calling thread, before it memoises: the problem is tuned within a small, bounded budget (anneal,
// at most KILN_TUNE_BUDGET_EVALS evaluations, default 24, and KILN_TUNE_BUDGET_SECONDS, default 5,
// for inputs, expected outputs and search together; then at most 3 finalists x 12 re-timed runs),
// the winner is written to the user database file and returned as the decision (From::tuned_now).
// Tuning is serialised by a mutex (TuningDb is not thread-safe and two threads missing on the
// same problem should tune it once): a thread that misses waits for any tuning in progress.
// The entry is written through a TuningDb of its own, so the Runtime's in-memory database, which
// other threads may be reading, is never modified.  The first call of each new problem blocks
// until its tuning ends; later calls are ordinary memo hits.
//
// race (the default when KILN_TUNE is unset): on a dispatch miss that rests on other problems'
// evidence, the prediction and the runner-up are timed on the problem and the faster is memoised
// (first_use_race.hpp); nothing is written to the database.
//
// record: every problem the dispatcher sees for the first time is appended to
// $KILN_TUNE_RECORD_FILE (default ./kiln-problems.txt) as "<op> <dtype> <shape> <device>", each
// line once (lines already in the file are not written again), for `kiln tune --from FILE`.
#include "tune_modes.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "kiln/errors.hpp"
#include "logger.hpp"
#include "tuning_db_files.hpp"
#include "kiln/runtime.hpp"
#include "kiln/tuner/first_use_race.hpp"
#include "kiln/tuner/plan.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::detail {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// A positive number from the environment within [lo, hi] (the bounds of the matching `kiln tune`
// flags); `integer` refuses a fraction.  Anything else is an error naming the variable: a huge
// value must not wrap to a budget of 0.
double env_number(const char* name, double fallback, double lo, double hi, bool integer) {
  const std::string v = env_or(name, "");
  if (v.empty()) return fallback;
  // Decimal text only, as the command-line flags (range_check.hpp): stod took " 5" and "0x10".
  const bool decimal = detail::decimal_text(v);
  try {
    std::size_t used = 0;
    const double d = decimal ? std::stod(v, &used) : 0.0;
    if (decimal && used == v.size() && d >= lo && d <= hi && (!integer || d == std::floor(d))) return d;
  } catch (const std::exception&) {
  }
  char range[96];
  std::snprintf(range, sizeof range, "%s in [%.15g, %.15g]", integer ? "an integer" : "a number", lo, hi);
  throw ArgumentError(std::string(name) + "='" + detail::printable(v) + "': expected " + range);  // no escapes
}

struct ProblemHash {
  std::size_t operator()(const Problem& p) const { return p.hash(); }
};

struct LazyTuner {
  Runtime* rt;
  TuneOptions options;
  std::mutex mutex;
  std::unordered_map<Problem, std::optional<Decision>, ProblemHash> done;
  std::atomic<bool> said_not_kept{false};

  std::optional<Decision> operator()(const Problem& p, const DeviceInfo& device) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = done.find(p);
    if (it != done.end()) return it->second;
    std::optional<Decision> decision;
    try {
      Tuner tuner(*rt);
      TuneReport r = tuner.tune(p, options);
      if (r.search.winner) {
        Decision d;
        d.variant = r.search.winner->candidate.variant;
        d.config = r.search.winner->candidate.config;
        d.from = Decision::From::tuned_now;
        d.workspace_bytes = d.variant->workspace_bytes(p, d.config);
        decision = std::move(d);
        store(p, device, *r.entry);
        logger()->info("KILN_TUNE=lazy: {} {} -> {} [{}]", p.schema->name, p.key(), decision->variant->name(),
                       decision->config.to_string());
      } else {
        logger()->warn("KILN_TUNE=lazy: {} {}: {}; using the defaults", p.schema->name, p.key(), r.error);
      }
    } catch (const std::exception& e) {
      logger()->warn("KILN_TUNE=lazy: tuning {} {} failed: {}; using the defaults", p.schema ? p.schema->name : "?",
                     p.key(), e.what());
    }
    done.emplace(p, decision);
    return decision;
  }

  void store(const Problem& p, const DeviceInfo& device, const TuningEntry& entry) {
    const std::string path = rt->db().user_path();
    if (path.empty()) {  // said once: the user asked for tuning that lasts
      if (!said_not_kept.exchange(true))
        logger()->warn("KILN_TUNE=lazy: no user tuning database (set KILN_CACHE_DIR or HOME): results are used by this "
                       "process only and tuned again by the next");
      return;
    }
    try {
      TuningDb writer({}, path);
      const auto& layers = writer.layers();
      const bool exists = !layers.empty() && layers.front().writable &&
                          layers.front().table.count(device.fingerprint()) &&
                          layers.front().table.at(device.fingerprint()).count(p.schema->name) &&
                          layers.front().table.at(device.fingerprint()).at(p.schema->name).count(p.key());
      // A misaligned call does not overwrite an entry tuned for aligned data of the same key.
      if (p.align_bytes < 16 && exists) return;
      writer.put(device.fingerprint(), p.schema->name, p.key(), entry);
    } catch (const TuningDbError& e) {
      logger()->warn("KILN_TUNE=lazy: could not store the result: {}", e.what());
    }
  }
};

struct Recorder {
  std::string path;
  std::mutex mutex;
  std::set<std::string> written;
  bool failed = false;  // reported once; later problems are not written

  // A problem list is small; past this many bytes the rest is not read (a line may be written
  // twice).  Only a regular file is read: /dev/zero or /dev/full would be read for ever.
  static constexpr std::size_t kMaxReadBytes = std::size_t(16) << 20;

  explicit Recorder(std::string file) : path(std::move(file)) {
    std::error_code ec;
    if (fs::is_fifo(path, ec)) {  // opening it would block op() until something reads the pipe
      logger()->warn("KILN_TUNE=record: '{}' is a pipe; nothing is recorded", detail::printable(path));
      failed = true;
    }
  }

  // The lines of the file as it is now (`fd` is open on it and locked); false, with `why`, when a
  // line is no line of a problem list: the file is something else, and nothing is appended to it.
  bool read_lines(int fd, std::string* why) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return true;
    std::string text, line;
    char buf[65536];
    for (off_t at = 0; text.size() < kMaxReadBytes;) {
      const ssize_t n = ::pread(fd, buf, sizeof buf, at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      at += n;
    }
    if (text.size() >= kMaxReadBytes) text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    std::istringstream in(text);
    for (int number = 1; std::getline(in, line); ++number) {
      if (std::string problem = problem_list_line_problem(line); !problem.empty()) {
        *why = "line " + std::to_string(number) + " is not a problem list line (" + problem + ")";
        return false;
      }
      if (!line.empty()) written.insert(line);
    }
    return true;
  }

  void operator()(const Problem& p) {
    const std::string line = problem_list_line(p);
    std::lock_guard<std::mutex> lock(mutex);
    if (failed || written.count(line)) return;
    // Only a regular file is kiln's to append to: a directory, a device or a socket is not.
    struct stat existing {};
    const bool exists = ::stat(path.c_str(), &existing) == 0;
    if (exists && !S_ISREG(existing.st_mode)) {
      logger()->warn("KILN_TUNE=record: '{}' is not a regular file ({}); nothing is recorded", detail::printable(path),
                     S_ISDIR(existing.st_mode) ? "a directory" : "a device, pipe or socket");
      failed = true;
      return;
    }
    if (std::string why = not_writable(exists); !why.empty()) {
      logger()->warn("KILN_TUNE=record: '{}' {}; nothing is recorded", detail::printable(path), why);
      failed = true;
      return;
    }
    // Under an exclusive flock, the file is read again before the line is appended: another
    // Runtime of this process or another process may have recorded the problem since.
    const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    bool ok = fd >= 0;
    int err = fd >= 0 ? 0 : errno;
    if (ok) {
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      std::string why;
      if (!read_lines(fd, &why)) {
        ::close(fd);
        logger()->warn("KILN_TUNE=record: '{}' {}: it is not a problem list, so nothing is appended to it",
                       detail::printable(path), detail::printable(why));
        failed = true;
        return;
      }
      if (!written.count(line)) {
        const std::string text = line + "\n";
        const ssize_t n = ::write(fd, text.data(), text.size());  // a full disk shows here
        ok = n == static_cast<ssize_t>(text.size());
        if (!ok) err = n < 0 ? errno : ENOSPC;
        written.insert(line);
      }
      ::close(fd);  // releases the lock
    }
    if (!ok) {
      logger()->warn("KILN_TUNE=record: cannot append to '{}' ({}); nothing more is recorded", detail::printable(path),
                     std::strerror(err));
      failed = true;
    }
  }

  // Why the record file cannot be appended to or created ("" when it can), judged by the mode
  // bits first: root passes access() and open() on a file or directory with no write bit at all,
  // and a file its owner made read-only (chmod a-w) must not be written by root either.  The
  // directory must exist: KILN_TUNE_RECORD_FILE does not create directories (a typo in it made
  // a tree nobody reads).
  std::string not_writable(bool exists) const {
    char mode[8];
    struct stat st {};
    if (exists && ::stat(path.c_str(), &st) == 0) {
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)
        return std::string("is read-only (mode ") + mode + "): expected a file kiln may append to (chmod u+w it, or "
               "set KILN_TUNE_RECORD_FILE to another file)";
      return {};
    }
    std::string dir = fs::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return "cannot be created: its directory '" + detail::printable(dir) +
             "' does not exist (KILN_TUNE_RECORD_FILE does not create directories; create it first)";
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    if ((st.st_mode & 0222) == 0 || ::access(dir.c_str(), W_OK | X_OK) != 0)
      return "cannot be created: its directory '" + detail::printable(dir) + "' is read-only (mode " + mode +
             "): expected a directory kiln may create the file in";
    return {};
  }
};

void install(Runtime& rt, const std::string& mode) {
  if (mode == "off") return;
  if (mode == "lazy") {
    auto lazy = std::make_shared<LazyTuner>();
    lazy->rt = &rt;
    lazy->options.store = false;  // written by LazyTuner::store
    lazy->options.search.strategy = "anneal";
    lazy->options.search.budget.evals =
        static_cast<std::size_t>(env_number("KILN_TUNE_BUDGET_EVALS", 24, 1, 1e9, /*integer=*/true));
    lazy->options.search.budget.seconds = env_number("KILN_TUNE_BUDGET_SECONDS", 5.0, 0.001, 1e7, /*integer=*/false);
    lazy->options.total_seconds = lazy->options.search.budget.seconds;
    lazy->options.search.timing.warmup = 1;
    lazy->options.search.timing.runs = 7;
    lazy->options.search.timing.min_runs = 3;
    lazy->options.search.finalists = 3;
    lazy->options.search.retime_rounds = 3;
    lazy->options.evaluator.max_seconds_per_candidate = 0.25;
    rt.dispatcher().set_miss_handler(
        [lazy](const Problem& p, const DeviceInfo& d, const Decision&) { return (*lazy)(p, d); });
    return;
  }
  if (mode == "race") {
    Runtime* runtime = &rt;
    rt.dispatcher().set_miss_handler(
        [runtime](const Problem& p, const DeviceInfo& d, const Decision& predicted) {
          return race_first_use(*runtime, p, d, predicted);
        });
    return;
  }
  if (mode == "record") {
    auto rec = std::make_shared<Recorder>(env_or("KILN_TUNE_RECORD_FILE", "kiln-problems.txt"));
    rt.dispatcher().set_problem_observer([rec](const Problem& p) { (*rec)(p); });
    return;
  }
  throw ArgumentError("KILN_TUNE='" + mode + "': expected off, race, lazy or record");
}

}  // namespace
}  // namespace kiln::detail

// Called by the core (core/src/tune_modes.cpp) for a Runtime whose KILN_TUNE mode needs the tuner.
extern "C" void kiln_tuner_install_tune_mode(kiln::Runtime& rt, const char* mode) {
  kiln::detail::install(rt, mode);
}
