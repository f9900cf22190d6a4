// Dispatcher: problem -> (variant, config).  Order: the tuning database (exact key, nearest
// entry of the same bucket, then the device fallback levels), and on a miss the variants'
// defaults in priority order, the first that supports the problem.  Decisions are memoised per
// problem (shape, dtype, device, alignment), so a repeated call costs one hash lookup.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/registry.hpp"
#include "kiln/tuning_db.hpp"

namespace kiln {

struct Decision {
  enum class From { database, defaults, tuned_now };
  const Variant* variant = nullptr;
  Config config;
  std::size_t workspace_bytes = 0;
  From from = From::defaults;
  std::optional<TuningHit> hit;                                  // when from the database
  std::vector<std::pair<std::string, std::string>> rejected;     // (what, why) considered first
  std::string explain() const;                                   // several lines for `kiln explain`
};

const char* decision_source_name(Decision::From from);

class Dispatcher {
 public:
  // Called on a database miss before falling back to defaults (KILN_TUNE=lazy installs one);
  // returns a decision to use and memoise, or nothing.
  using MissHandler = std::function<std::optional<Decision>(const Problem&, const DeviceInfo&)>;
  // Called once per new problem (KILN_TUNE=record installs one).
  using ProblemObserver = std::function<void(const Problem&)>;

  Dispatcher(const Registry& registry, const TuningDb& db) : registry_(&registry), db_(&db) {}

  // Memoised; throws NoVariantError listing every variant's reason when nothing supports p.
  const Decision& decide(const Problem& p, const DeviceInfo& device);
  // Not memoised, never calls the miss handler: what `kiln explain` prints.
  Decision decide_uncached(const Problem& p, const DeviceInfo& device) const;
  // Whether `entry` may be used for p on device: variant present, build id current, config in
  // its space and valid, variant supports p.  Sets `why` when not.
  bool entry_usable(const TuningEntry& entry, const Problem& p, const DeviceInfo& device, std::string* why) const;

  void set_miss_handler(MissHandler h) { miss_handler_ = std::move(h); }
  void set_problem_observer(ProblemObserver o) { observer_ = std::move(o); }
  void clear_memo();
  std::size_t memo_size() const;

 private:
  struct KeyHash {
    std::size_t operator()(const Problem& p) const { return p.hash(); }
  };
  const Registry* registry_;
  const TuningDb* db_;
  MissHandler miss_handler_;
  ProblemObserver observer_;
  mutable std::shared_mutex mutex_;   // guards memo_
  std::mutex miss_mutex_;             // serialises misses (database reads, lazy tuning)
  std::unordered_map<Problem, std::unique_ptr<Decision>, KeyHash> memo_;
};

}  // namespace kiln
