// Dispatcher: problem -> (variant, config), from evidence (docs/architecture.md, "Dispatch from
// evidence").  In order, at each device fallback level of the tuning database: the entry of the
// exact problem key, then the tuned neighbours of the same mode class (mode dims and dtype
// equal, size dims within kNeighbourRadius in log2 space), weighed: the variant with the lowest
// expected slowdown over the nearest few (their winners' and alternatives' times), at the config
// of the nearest one that timed it (near ties ordered by divisibility; a vendor variant's config
// only from within kVendorConfigRadius) or its default when none fits; then the nearest usable entry of the
// class at any distance (a far neighbour); then a cost model calibrated from the class's entries
// (only when no entry of the class is usable); then, when the class's entries are all stale (their
// plugin rebuilt since they were tuned), the variants they weigh best at their defaults; then the
// vendor variant; then the first variant by priority.  Static priorities only break ties.
//
// Decisions are memoised per problem (shape, dtype, device, alignment).  A memo hit is lock-free
// and allocation-free (find()); a decision, once made, is never freed or changed while the
// Dispatcher lives, so a thread may keep using it while another tunes, writes the database or
// clears the memo (clear_memo() publishes a fresh, empty memo; old decisions stay valid).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/registry.hpp"
#include "kiln/tuning_db.hpp"

namespace kiln {

namespace detail {
struct BoundCall;  // core/src/bound_call.hpp: a decision bound to one argument layout (op()'s hot path)
}

struct Decision {
  enum class From { database, defaults, tuned_now };
  // Which evidence chose the variant (what `kiln explain` prints).
  enum class Evidence {
    exact_entry,      // the tuned entry of this problem's key
    neighbour,        // the nearest tuned entry of the same mode class (distance below)
    far_neighbour,    // no usable entry within the radius: the nearest usable one of the class
    neighbour_variant,  // no neighbour's config fits: the nearest neighbour's variant at its default
    model,            // the cost model calibrated from the class's entries (predicted_us below)
    stale_neighbours,  // every entry near is stale (plugin rebuilt since): their variants, weighed, at defaults
    vendor_fallback,  // no evidence: the vendor library
    priority,         // no evidence and no vendor variant: the first variant by priority
    tuned_now,        // tuned on first use (KILN_TUNE=lazy)
    sibling_neighbour,  // no entry of the class near (or none usable): its modes' entries in a same-width dtype
                        // (last, so the values above keep their numbers)
  };
  const Variant* variant = nullptr;
  Config config;
  std::size_t workspace_bytes = 0;
  From from = From::defaults;
  Evidence evidence = Evidence::priority;
  std::optional<TuningHit> hit;                                  // exact_entry and neighbour
  double distance = 0;                                           // (far) neighbour: log2-space distance
  std::string config_note;                                       // why the config is not the entry's
  double predicted_us = 0;                                       // model: its estimate
  std::vector<std::pair<std::string, double>> estimates;         // model: every variant's estimate
  // neighbour: every variant the weighed neighbours timed, with its expected time over their best
  // (lowest first), and how many neighbours were weighed.
  std::vector<std::pair<std::string, double>> weighed;
  int weighed_neighbours = 0;
  std::vector<std::pair<std::string, std::string>> rejected;     // (what, why) considered first
  // Raced at first use (KILN_TUNE=race, the default on CUDA devices): the prediction above and the
  // dispatcher's next choice without its variant were timed on this problem, and this one kept;
  // race_note says what each took.  `evidence` stays that of the decision kept.
  bool raced = false;
  std::string race_note;
  // The config bound to its kernel (Variant::prepare); set by Dispatcher::decide, null in the
  // decisions decide_uncached returns.
  std::shared_ptr<const PreparedLaunch> launch;
  std::string explain() const;                                   // several lines for `kiln explain`
};

const char* decision_source_name(Decision::From from);
const char* evidence_name(Decision::Evidence evidence);

class Dispatcher {
 public:
  // Called on a miss without database evidence for the exact problem, with the decision the
  // evidence gives (KILN_TUNE=lazy and race install one); returns a decision to use and memoise
  // instead, or nothing.
  using MissHandler =
      std::function<std::optional<Decision>(const Problem&, const DeviceInfo&, const Decision& predicted)>;
  // Called once per new problem (KILN_TUNE=record installs one).
  using ProblemObserver = std::function<void(const Problem&)>;

  Dispatcher(const Registry& registry, const TuningDb& db);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The memoised decision for p, or null: lock-free, allocation-free.
  const Decision* find(const Problem& p) const noexcept;
  // find(), and the decision bound to the layout of `args` (from which p was derived) in *bound:
  // bound the first time a layout is seen for this decision (at most kBoundLayouts per decision,
  // slots kept in the memo node: no allocation; never waits for the miss mutex), null when it
  // cannot bind now.  What op() keeps in its Op handle, so that the next call with that layout
  // skips validation and this lookup.
  const Decision* find_bound(const Problem& p, const Args& args, const detail::BoundCall** bound);
  static constexpr int kBoundLayouts = 4;
  // Starts at 0; clear_memo() (and so update_database()) moves it on.  A bound call of an older
  // generation is not used.
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  // Memoised; throws NoVariantError listing every variant's reason when nothing supports p.  The
  // reference stays valid for the Dispatcher's lifetime.
  const Decision& decide(const Problem& p, const DeviceInfo& device);
  // Not memoised, never calls the miss handler: what `kiln explain` prints.
  Decision decide_uncached(const Problem& p, const DeviceInfo& device) const;
  // Leave-one-out evaluation (`kiln db loo`): what decide_uncached would choose for p if the
  // database had no entry under the problem key `left_out`.  With `trust_entries`, every entry
  // counts as usable without checking it against the loaded variants (a database of a GPU this
  // machine does not have); an entry whose variant is not loaded then leaves `variant` null and
  // is named in `hit`.
  struct LeaveOneOut {
    std::string left_out;
    bool trust_entries = false;
    // The runners-up of the first-use race: decide as if these variants were not registered.
    std::vector<std::string> excluded_variants;
  };
  Decision decide_uncached(const Problem& p, const DeviceInfo& device, const LeaveOneOut& loo) const;
  // Whether `entry` may be used for p on device: variant present, build id current, config in
  // its space and valid, variant supports p.  Sets `why` when not.
  bool entry_usable(const TuningEntry& entry, const Problem& p, const DeviceInfo& device, std::string* why) const;
  // Whether an entry's alternative was timed with the loaded build of its variant's plugin; an
  // unrecorded build or a variant that is not loaded counts as current (nothing says otherwise).
  bool alternative_current(const TunedAlternative& a) const;

  // Throws the matching ArgumentError subclass, its message starting "<who>: argument 'problem'",
  // unless p is a problem op() could make with this registry: a schema the registry holds (the
  // pointer is compared before it is followed), its dim count, a known dtype, align_bytes 1, 2, 4,
  // 8 or 16, and dims, dtype and device that OpSchema::check_problem accepts (problem_from_dims'
  // checks, an empty problem allowed).  decide(),
  // decide_uncached() and Runtime::explain() check a hand-made Problem so.
  void check_problem(const Problem& p, const std::string& who) const;

  void set_miss_handler(MissHandler h) { miss_handler_ = std::move(h); }
  void set_problem_observer(ProblemObserver o) { observer_ = std::move(o); }
  // Forgets every decision (they stay valid for whoever holds one); the next call decides again.
  void clear_memo();
  // Runs `write` (a change of the tuning database, e.g. TuningDb::put) while no dispatch miss
  // reads the database, then clears the memo so the change is seen.
  void update_database(const std::function<void()>& write);
  std::size_t memo_size() const;

 private:
  static void check_hand_made(const Problem& p);  // throws ArgumentError for a dim count past dims[]
  struct Node;
  struct Table;
  const Node* find_node(const Problem& p) const noexcept;
  void insert_locked(Node* node);
  // The decision for a checked Problem (decide() and decide_uncached() check it first, once).
  Decision decide_impl(const Problem& p, const DeviceInfo& device, const LeaveOneOut* loo) const;

  const Registry* registry_;
  const TuningDb* db_;
  MissHandler miss_handler_;
  ProblemObserver observer_;
  std::atomic<const Table*> memo_{nullptr};
  std::atomic<std::uint64_t> generation_{0};
  // Serialises misses, memo writes and database writes; recursive so that a miss handler may
  // tune and store (update_database) on the same thread.
  mutable std::recursive_mutex miss_mutex_;
  std::deque<std::unique_ptr<Table>> tables_;  // every memo table published; never freed early
  std::deque<std::unique_ptr<Node>> nodes_;    // every decision made; never freed early
};

}  // namespace kiln
