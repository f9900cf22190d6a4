// TuningDb: the tuned choices, in YAML, keyed by device fingerprint, op and problem key.
//
//   entries: 1                     # written by kiln, first: how many follow (truncation check)
//   schema: 1
//   devices:
//     "NVIDIA H200|sm_90|132sm":
//       gemm:
//         "f32|m=4096|n=4096|k=4096":
//           variant: gemm_register_blocked
//           config: {BM: 128, BN: 128, BK: 16, TM: 8, TN: 8}
//           median_us: 2701.3
//           mad_us: 4.1
//           samples: 50
//           throughput: 50.9
//           throughput_unit: TFLOP/s
//           plugin: {name: gemm, version: 0.1.0, build: 3f9c2a1}
//           tuned_at: 2026-11-21T10:00:00Z
//           alternatives:          # optional: the fastest config of each other variant timed,
//             - gemm_cublas - 2810.4 1281fefa56c5   # "VARIANT CONFIG MEDIAN_US [BUILD]", CONFIG
//             - gemm_tiled TILE=16,BK=8 3400.1      # "-" or name=value,... (one YAML node each)
//
// Layers: shipped read-only files (configs/) under one user file ($KILN_CACHE_DIR/tuning.yaml,
// else $XDG_CACHE_HOME/kiln/tuning.yaml, else ~/.cache/kiln/tuning.yaml); the user layer wins.
// The files are read lazily, on the first lookup() or inspection, not when the object is built.
// put(), update() and prune() rewrite the user file atomically (a fresh unpredictable temp file
// + rename, keeping the file's mode) under an advisory lock (flock on "<file>.lock", which names
// its holder's pid; waiting for it times out), re-reading it first so entries another process
// wrote meanwhile are kept.  A corrupt or wrong-schema file is reported in errors(), never
// overwritten, and its layer is skipped; one bad entry is reported in warnings() and skipped
// alone.  Limits, symlink and shared-directory rules: docs/architecture.md, "Threat model".
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/param_space.hpp"
#include "kiln/problem.hpp"

namespace kiln {

inline constexpr int kTuningDbSchema = 1;
// What one database file may hold; a file over a limit is refused with an error naming it, and
// a write that would go over one throws TuningDbError and leaves the file as it was.
inline constexpr std::size_t kTuningDbMaxFileBytes = std::size_t{16} << 20;
inline constexpr std::size_t kTuningDbMaxEntries = 50000;
// YAML nodes after alias expansion (an alias bomb is refused before it is expanded).
inline constexpr std::uint64_t kTuningDbMaxNodes = 4000000;
// How long put()/update()/prune() wait for another process's lock; KILN_DB_LOCK_TIMEOUT
// (seconds) overrides it.
inline constexpr double kTuningDbDefaultLockTimeoutSeconds = 30.0;

// The fastest config the search timed of a variant other than the winner, and its time: the
// evidence dispatch weighs when a problem has no entry of its own (how much a neighbour's
// winner would lose to the runner-up, not only who won).
struct TunedAlternative {
  std::string variant;
  Config config;
  double median_us = 0.0;
  // The build id of the plugin the alternative's variant came from ("" when not recorded): its
  // time says nothing about another build, like an entry's own `plugin.build`.
  std::string plugin_build;
  bool operator==(const TunedAlternative& o) const {
    return variant == o.variant && config == o.config && median_us == o.median_us && plugin_build == o.plugin_build;
  }
};
// An entry keeps at most this many alternatives (one per variant; no op has this many variants).
inline constexpr std::size_t kTuningMaxAlternatives = 64;

struct TuningEntry {
  std::string variant;
  Config config;
  double median_us = 0.0;
  double mad_us = 0.0;
  int samples = 0;
  double throughput = 0.0;
  std::string throughput_unit;     // "TFLOP/s" or "GB/s"
  std::string plugin_name;
  std::string plugin_version;
  std::string plugin_build;
  std::string tuned_at;            // ISO 8601 UTC
  std::vector<TunedAlternative> alternatives;  // fastest first; none for entries tuned before them
  // Fields this kiln does not know (written by a newer one), as YAML text, kept across rewrites.
  std::vector<std::pair<std::string, std::string>> extra_fields;
  std::vector<std::pair<std::string, std::string>> extra_plugin_fields;
  bool operator==(const TuningEntry& o) const;
};

// One file's content: device fingerprint -> op -> problem key -> entry.
using TuningTable = std::map<std::string, std::map<std::string, std::map<std::string, TuningEntry>>>;

struct TuningLayer {
  std::string path;
  bool writable = false;
  TuningTable table;
};

struct TuningHit {
  TuningEntry entry;
  std::string layer_path;          // which file
  std::string device_key;          // the fingerprint it was stored under
  std::string problem_key;         // the key it was stored under
  FallbackLevel level = FallbackLevel::exact;
  bool exact_problem = true;       // false: nearest entry of the same bucket
  // Set when `entry` is a view of one of the stored entry's alternatives (variant, config and
  // median_us are the alternative's): the stored winner's variant.
  std::string alternative_of;
};

class TuningDb {
 public:
  TuningDb();
  // The shipped files (read-only, later files win over earlier ones) and the user file (which
  // need not exist).  Nothing is read here: the files are read on first use, and problems are
  // reported in errors() and warnings(), never thrown.
  TuningDb(std::vector<std::string> shipped_paths, std::string user_path);
  TuningDb(TuningDb&& other) noexcept;
  TuningDb& operator=(TuningDb&& other) noexcept;
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  // The user file from the environment: $KILN_CACHE_DIR/tuning.yaml, else
  // $XDG_CACHE_HOME/kiln/tuning.yaml (when absolute: a relative one is ignored), else
  // ~/.cache/kiln/tuning.yaml ("" when none is set).
  static std::string default_user_path();
  // The shipped files: every *.yaml in the installed configs dir, or KILN_CONFIG_PATH
  // (':'-separated files or dirs) when set: set to "" means none, and an empty entry stands for
  // the installed dir (the rule of KILN_PLUGIN_PATH too).
  static std::vector<std::string> default_shipped_paths();

  // Finds the entry for (device, op, problem): exact device key first, then the fallback levels;
  // at each level the exact problem key, then the nearest entry of the same bucket (log-distance
  // of dims).  User layer before shipped layers.  `accept` rejects entries (stale build id,
  // variant absent or not supporting the problem); rejected ones are skipped, not returned.
  std::optional<TuningHit> lookup(const DeviceInfo& device, const std::string& op, const Problem& problem,
                                   const std::string& bucket,
                                   const std::function<bool(const TuningEntry&)>& accept,
                                   const std::function<std::string(const Problem&)>& bucket_of_key = nullptr) const;

  // Stores an entry in the user layer and in memory.  Throws TuningDbError when the user file
  // is corrupt (it is left as it was), cannot be written, or would go over kTuningDbMaxEntries or
  // kTuningDbMaxFileBytes (it is left as it was, and so is the in-memory layer).
  void put(const std::string& device_key, const std::string& op, const std::string& problem_key,
           const TuningEntry& entry);
  // Locked read-modify-write of the user file (what `kiln db merge` uses): under the lock, reads
  // the file as it is on disk now, lets `edit` change it, and writes it back atomically; the
  // in-memory user layer follows.  Throws TuningDbError like put(), and, leaving the file as it
  // was, when `edit` leaves an entry, key, op or device key the reader would skip.
  void update(const std::function<void(TuningTable&)>& edit);
  // Removes entries for which `drop` is true from the user file; returns how many.
  std::size_t prune(const std::function<bool(const std::string& device, const std::string& op,
                                             const std::string& key, const TuningEntry&)>& drop);

  // These read the files on first use.
  const std::vector<TuningLayer>& layers() const;
  const std::vector<std::string>& errors() const;    // files skipped: path and reason
  const std::vector<std::string>& warnings() const;  // entries skipped, truncated files
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  const std::string& user_path() const { return user_path_; }
  void reload();

  // Called once per message when the files are read (is_error: the file was skipped); the
  // Runtime logs them, the CLI prints them.  Set it before the first use.  It runs while the files
  // are being read: reload() called from inside it throws ArgumentError.
  void set_reporter(std::function<void(const std::string& message, bool is_error)> reporter);
  // How long put(), update() and prune() wait for another process's lock (the default comes from
  // KILN_DB_LOCK_TIMEOUT).  Throws ArgumentError unless `seconds` is a number >= 0 (NaN would
  // never time out, so a write would wait for ever).
  void set_lock_timeout(double seconds);

  // Cheap check that put() can store an entry, for callers about to spend minutes tuning:
  // throws TuningDbError when no user file is configured, the user file is corrupt, a symlink
  // kiln does not follow, a directory, or not writable, or its directory cannot be created.
  void check_writable() const;

  // File helpers.  read_file throws TuningDbError with the path and the reason (entries that are
  // skipped go to `warnings`); it reads at most kTuningDbMaxFileBytes, so a device or pipe ends
  // with an error.  write_file is atomic (fresh temp file + rename, keeping the mode) but takes
  // no lock: to change the user file use put(), update() or prune(), which hold it.  Every write
  // holds the table to the reader's rules: an entry read_file would skip throws TuningDbError
  // naming it, and nothing is written.
  static TuningTable read_file(const std::string& path, std::vector<std::string>* warnings = nullptr);
  static void write_file(const std::string& path, const TuningTable& table);
  static std::string to_yaml(const TuningTable& table);
  static TuningTable from_yaml(const std::string& text, const std::string& what,
                               std::vector<std::string>* warnings = nullptr);

 private:
  void ensure_loaded() const;
  void load_now() const;
  void set_user_layer(TuningTable table);
  // A rewrite that left out unreadable parts of the user file: to warnings() and the reporter.
  void report_dropped(const std::string& message) const;

  std::vector<std::string> shipped_paths_;
  std::string user_path_;
  double lock_timeout_s_;
  std::function<void(const std::string&, bool)> reporter_;
  // Filled by load_now(), once, under load_mutex_ (lookup() may run on several threads).
  mutable std::vector<TuningLayer> layers_;  // user layer first (when readable), then shipped, last first
  mutable std::vector<std::string> errors_;
  mutable std::vector<std::string> warnings_;
  mutable std::string user_error_;           // why the user layer was skipped ("" when it was not)
  mutable std::atomic<bool> loaded_{false};
  mutable std::unique_ptr<std::mutex> load_mutex_;
};

// Merges `from` into `into`; on a key present in both, the entry with the lower median time
// wins unless `prefer_newer` (then the later tuned_at).  Returns how many entries changed.
std::size_t merge_tables(TuningTable& into, const TuningTable& from, bool prefer_newer = false);

}  // namespace kiln
