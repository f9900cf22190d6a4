#include "kiln/dispatcher.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <tuple>

#include "bound_call.hpp"
#include "evidence.hpp"
#include "logger.hpp"
#include "kiln/op_schema.hpp"

namespace kiln {

const char* decision_source_name(Decision::From from) {
  switch (from) {
    case Decision::From::database: return "tuning database";
    case Decision::From::defaults: return "variant defaults";
    case Decision::From::tuned_now: return "tuned on first use (KILN_TUNE=lazy)";
  }
  return "?";
}

const char* evidence_name(Decision::Evidence evidence) {
  switch (evidence) {
    case Decision::Evidence::exact_entry: return "exact entry";
    case Decision::Evidence::neighbour: return "tuned neighbour";
    case Decision::Evidence::far_neighbour: return "far neighbour (nearest usable entry past the radius)";
    case Decision::Evidence::sibling_neighbour:
      return "sibling class's tuned neighbour (the same modes in another dtype of the same width)";
    case Decision::Evidence::neighbour_variant: return "tuned neighbour's variant at its default config";
    case Decision::Evidence::model: return "model estimate";
    case Decision::Evidence::stale_neighbours: return "stale neighbours' variants at their defaults (plugins rebuilt since tuning)";
    case Decision::Evidence::vendor_fallback: return "vendor fallback (no evidence)";
    case Decision::Evidence::priority: return "priority (no evidence, no vendor variant)";
    case Decision::Evidence::tuned_now: return "tuned on first use (KILN_TUNE=lazy)";
  }
  return "?";
}

std::string Decision::explain() const {
  char buf[160];
  std::string s;
  s += "variant: " + (variant ? variant->name() : hit ? hit->entry.variant + " (not loaded)" : std::string("(none)")) + "\n";
  s += "config:  " + config.to_string() + "\n";
  s += "source:  " + std::string(decision_source_name(from)) + "\n";
  s += "evidence: " + std::string(evidence_name(evidence));
  if (evidence == Evidence::neighbour || evidence == Evidence::far_neighbour || evidence == Evidence::neighbour_variant ||
      evidence == Evidence::stale_neighbours || evidence == Evidence::sibling_neighbour) {
    std::snprintf(buf, sizeof buf, ", distance %.3f (log2 of the size dims; radius %.1f)", distance,
                  detail::kNeighbourRadius);
    s += buf;
  }
  if (evidence == Evidence::model) {
    std::snprintf(buf, sizeof buf, ", predicted %.2f us", predicted_us);
    s += buf;
  }
  s += "\n";
  if (!config_note.empty()) s += "  config:  " + config_note + "\n";
  if (raced) s += "  raced:   " + race_note + "\n";
  if (hit) {
    s += "  file:    " + hit->layer_path + "\n";
    s += "  device:  " + hit->device_key + " (" + fallback_level_name(hit->level) + ")\n";
    s += "  problem: " + hit->problem_key + (hit->exact_problem ? " (exact key)" : " (nearest of the same modes)") + "\n";
    std::snprintf(buf, sizeof buf, "  tuned:   median %.2f us (MAD %.2f us, %d samples)", hit->entry.median_us,
                  hit->entry.mad_us, hit->entry.samples);
    s += buf;
    if (!hit->entry.tuned_at.empty()) s += " at " + hit->entry.tuned_at;
    s += "\n";
  }
  if (hit && !hit->alternative_of.empty())
    s += "  (the neighbour's time for this variant; its winner there was " + hit->alternative_of + ")\n";
  if (!weighed.empty()) {
    std::snprintf(buf, sizeof buf, "neighbours weighed: %d (expected time over each one's fastest, fitted along the size dims, weight 1 / (distance + %.1f)):\n",
                  weighed_neighbours, detail::kWeightOffset);
    s += buf;
    for (const auto& [name, ratio] : weighed) {
      std::snprintf(buf, sizeof buf, "  %-28s %8.3fx\n", name.c_str(), ratio);
      s += buf;
    }
  }
  if (!estimates.empty()) {
    s += "model estimates (overhead + work / calibrated rate, wave quantisation):\n";
    for (const auto& [name, us] : estimates) {
      std::snprintf(buf, sizeof buf, "  %-28s %10.2f us\n", name.c_str(), us);
      s += buf;
    }
  }
  if (workspace_bytes) s += "workspace: " + std::to_string(workspace_bytes) + " bytes\n";
  if (!rejected.empty()) {
    s += "considered first and rejected:\n";
    for (const auto& [what, why] : rejected) s += "  " + what + ": " + why + "\n";
  }
  return s;
}

namespace {

bool has_dtype(const Variant& v, DType t) {
  return v.dtypes().empty() || std::find(v.dtypes().begin(), v.dtypes().end(), t) != v.dtypes().end();
}

// Device kind, dtype, config validity and supports(): the checks every candidate passes.
bool usable(const Variant& v, const Config& config, const Problem& p, const DeviceInfo& device, std::string* why) {
  if (v.device_kind() != device.device.kind) {
    if (why) *why = std::string("runs on ") + device_kind_name(v.device_kind()) + ", the arguments are on " + device.device.to_string();
    return false;
  }
  if (!has_dtype(v, p.dtype)) {
    if (why) *why = "does not support dtype " + std::string(dtype_name(p.dtype));
    return false;
  }
  if (auto bad = v.space().violated(config, device, p)) {
    if (why) *why = "config " + config.to_string() + ": " + *bad;
    return false;
  }
  const Support s = v.supports_or_no(p, device, config);  // a throwing supports() passes the variant over
  if (!s.ok) {
    if (why) *why = s.reason.empty() ? std::string("not supported") : s.reason;
    return false;
  }
  return true;
}

// Rejected neighbours are listed for `kiln explain` up to this many (a coverage database has
// hundreds of entries).
constexpr std::size_t kMaxListedNeighbours = 6;

}  // namespace

// ---- memo ------------------------------------------------------------------------------------

struct Dispatcher::Node {
  Problem problem;
  std::size_t hash = 0;
  Decision decision;
  std::uint64_t generation = 0;  // of the memo it was made for
  // The decision bound to the argument layouts it was called with: a slot is written once, under
  // the miss mutex, then published (release) and read lock-free.  Kept in the node, so binding
  // allocates nothing.
  mutable std::atomic<const detail::BoundCall*> bound[kBoundLayouts] = {};
  mutable detail::BoundCall bound_storage[kBoundLayouts];
};

// Open addressing, linear probing; slots are written once (null -> node) under the miss mutex and
// read without a lock.  Grown by publishing a copy twice the size; the old table stays allocated.
struct Dispatcher::Table {
  explicit Table(std::size_t capacity) : mask(capacity - 1), slots(new std::atomic<const Node*>[capacity]) {
    for (std::size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
  }
  std::size_t mask;
  std::unique_ptr<std::atomic<const Node*>[]> slots;
  std::atomic<std::size_t> count{0};
};

Dispatcher::Dispatcher(const Registry& registry, const TuningDb& db) : registry_(&registry), db_(&db) {
  tables_.push_back(std::make_unique<Table>(64));
  memo_.store(tables_.back().get(), std::memory_order_release);
}

Dispatcher::~Dispatcher() = default;

const Dispatcher::Node* Dispatcher::find_node(const Problem& p) const noexcept {
  const Table* t = memo_.load(std::memory_order_acquire);
  const std::size_t h = p.hash();
  for (std::size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    const Node* n = t->slots[i].load(std::memory_order_acquire);
    if (!n) return nullptr;
    if (n->hash == h && n->problem == p) return n;
  }
}

const Decision* Dispatcher::find(const Problem& p) const noexcept {
  const Node* n = find_node(p);
  return n ? &n->decision : nullptr;
}

const Decision* Dispatcher::find_bound(const Problem& p, const Args& args, const detail::BoundCall** bound) {
  *bound = nullptr;
  const Node* n = find_node(p);
  if (!n) return nullptr;
  // Slots fill in order and are never emptied: the first free one ends the search.
  auto bound_in_slots = [&]() -> std::pair<const detail::BoundCall*, int> {
    for (int i = 0; i < kBoundLayouts; ++i) {
      const detail::BoundCall* b = n->bound[i].load(std::memory_order_acquire);
      if (!b) return {nullptr, i};
      if (detail::same_layout(b->layout, args)) return {b, i};
    }
    return {nullptr, kBoundLayouts};  // every slot holds another layout
  };
  auto [b, free_slot] = bound_in_slots();
  // Bind this layout, once per layout and decision, under the miss mutex (another thread may have
  // bound it meanwhile, so look again holding it).  try_lock: this runs on memo hits, which never
  // wait; while a miss or a database write holds the mutex, a later call binds instead.
  if (!b && free_slot < kBoundLayouts && miss_mutex_.try_lock()) {
    std::lock_guard<std::recursive_mutex> lock(miss_mutex_, std::adopt_lock);
    std::tie(b, free_slot) = bound_in_slots();
    if (!b && free_slot < kBoundLayouts) {
      detail::BoundCall& made = n->bound_storage[free_slot];
      made.layout = detail::layout_of(args);
      made.problem = n->problem;
      made.decision = &n->decision;
      made.launch = n->decision.launch.get();
      made.workspace_bytes = n->decision.workspace_bytes;
      made.generation = n->generation;
      n->bound[free_slot].store(&made, std::memory_order_release);
      b = &made;
    }
  }
  *bound = b;
  return &n->decision;
}

void Dispatcher::insert_locked(Node* node) {
  const Table* cur = memo_.load(std::memory_order_relaxed);
  const std::size_t count = cur->count.load(std::memory_order_relaxed);
  if (2 * (count + 1) > cur->mask + 1) {  // keep the load factor at most 1/2
    auto bigger = std::make_unique<Table>(2 * (cur->mask + 1));
    for (std::size_t i = 0; i <= cur->mask; ++i) {
      const Node* n = cur->slots[i].load(std::memory_order_relaxed);
      if (!n) continue;
      std::size_t j = n->hash & bigger->mask;
      while (bigger->slots[j].load(std::memory_order_relaxed)) j = (j + 1) & bigger->mask;
      bigger->slots[j].store(n, std::memory_order_relaxed);
    }
    bigger->count.store(count, std::memory_order_relaxed);
    tables_.push_back(std::move(bigger));
    memo_.store(tables_.back().get(), std::memory_order_release);
    cur = tables_.back().get();
  }
  Table* t = const_cast<Table*>(cur);
  std::size_t j = node->hash & t->mask;
  while (t->slots[j].load(std::memory_order_relaxed)) j = (j + 1) & t->mask;
  t->slots[j].store(node, std::memory_order_release);
  t->count.store(count + 1, std::memory_order_relaxed);
}

void Dispatcher::clear_memo() {
  std::lock_guard<std::recursive_mutex> lock(miss_mutex_);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  tables_.push_back(std::make_unique<Table>(64));
  memo_.store(tables_.back().get(), std::memory_order_release);
}

void Dispatcher::update_database(const std::function<void()>& write) {
  std::lock_guard<std::recursive_mutex> lock(miss_mutex_);
  if (write) write();
  clear_memo();
}

std::size_t Dispatcher::memo_size() const {
  return memo_.load(std::memory_order_acquire)->count.load(std::memory_order_relaxed);
}

// ---- decisions -------------------------------------------------------------------------------

bool Dispatcher::entry_usable(const TuningEntry& entry, const Problem& p, const DeviceInfo& device, std::string* why) const {
  const Variant* v = registry_->find_variant(entry.variant);
  if (!v) {
    if (why) *why = "variant '" + entry.variant + "' is not loaded";
    return false;
  }
  if (!p.schema || v->op() != p.schema->name) {
    if (why) *why = "variant '" + entry.variant + "' implements op '" + v->op() + "'";
    return false;
  }
  const Source& src = registry_->source_of(*v);
  if (!entry.plugin_build.empty() && !src.build_id.empty() && entry.plugin_build != src.build_id) {
    if (why) *why = "stale: tuned with " + entry.plugin_name + " build " + entry.plugin_build + ", loaded build is " + src.build_id;
    return false;
  }
  return usable(*v, entry.config, p, device, why);
}

bool Dispatcher::alternative_current(const TunedAlternative& a) const {
  if (a.plugin_build.empty()) return true;
  const Variant* v = registry_->find_variant(a.variant);
  if (!v) return true;
  const Source& src = registry_->source_of(*v);
  return src.build_id.empty() || src.build_id == a.plugin_build;
}

Decision Dispatcher::decide_uncached(const Problem& p, const DeviceInfo& device) const {
  check_problem(p, "Dispatcher");  // a hand-made Problem, before anything reads its fields
  return decide_impl(p, device, nullptr);
}

Decision Dispatcher::decide_uncached(const Problem& p, const DeviceInfo& device, const LeaveOneOut& loo) const {
  check_problem(p, "Dispatcher");
  return decide_impl(p, device, &loo);
}

// Problem is a plain struct a caller may fill in by hand: a dim count past dims[] would make the
// memo's key comparison (same_key) and hash read beyond it.  Problems from op() never fail this.
void Dispatcher::check_hand_made(const Problem& p) {
  if (p.n_dims < 0 || p.n_dims > Problem::kMaxDims)
    throw ArgumentError("Dispatcher: problem has n_dims = " + std::to_string(p.n_dims) + ", expected 0 to " +
                        std::to_string(Problem::kMaxDims));
}

void Dispatcher::check_problem(const Problem& p, const std::string& who) const {
  check_hand_made(p);
  const std::string head = who + ": argument 'problem' ";
  if (!p.schema)
    throw ArgumentError(who + ": the problem names no op (schema is null); make it with "
                        "OpSchema::problem_from_shape or Op::problem");
  // The pointer is compared, never followed, until it is known to be one of the registry's.
  bool registered = false;
  for (const std::string& name : registry_->op_names()) registered = registered || registry_->find_op(name) == p.schema;
  if (!registered)
    throw ArgumentError(head + "names an op schema this runtime's registry does not hold (expected a Problem made by "
                        "OpSchema::problem_from_dims, problem_from_shape or Op::problem of this runtime)");
  const OpSchema& schema = *p.schema;
  if (p.n_dims != static_cast<int>(schema.dim_names.size()))
    throw ShapeError(head + "has " + std::to_string(p.n_dims) + " dims, expected " +
                     std::to_string(schema.dim_names.size()) + " for op '" + schema.name + "'");
  if (dtype_size(p.dtype) == 0)
    throw DTypeError(head + "has an unknown dtype (" + std::to_string(static_cast<int>(p.dtype)) + ")");
  const int a = p.align_bytes;
  if (a != 1 && a != 2 && a != 4 && a != 8 && a != 16)
    throw ArgumentError(head + "has align_bytes = " + std::to_string(a) + ", expected 1, 2, 4, 8 or 16");
  // The dims, dtype and device as op() would have made them: the schema's own checks.
  try {
    schema.check_problem(p);
  } catch (const DTypeError& e) {
    throw DTypeError(head + "is not one op() could make: " + e.what());
  } catch (const ShapeError& e) {
    throw ShapeError(head + "is not one op() could make: " + e.what());
  } catch (const DeviceError& e) {
    throw DeviceError(head + "is not one op() could make: " + e.what());
  } catch (const ArgumentError& e) {
    throw ArgumentError(head + "is not one op() could make: " + e.what());
  }
}

Decision Dispatcher::decide_impl(const Problem& p, const DeviceInfo& device, const LeaveOneOut* loo) const {
  // Reads the database: excluded from update_database() (explain() calls this directly).
  std::lock_guard<std::recursive_mutex> lock(miss_mutex_);
  Decision d;
  const std::string op = p.schema ? p.schema->name : std::string();
  auto finish = [&](const Variant* v, Config config, Decision::Evidence ev) {
    d.variant = v;
    d.config = std::move(config);
    d.evidence = ev;
    d.from = (ev == Decision::Evidence::exact_entry || ev == Decision::Evidence::neighbour ||
              ev == Decision::Evidence::far_neighbour || ev == Decision::Evidence::neighbour_variant ||
              ev == Decision::Evidence::sibling_neighbour)
                 ? Decision::From::database
                 : Decision::From::defaults;
    d.workspace_bytes = v ? v->workspace_bytes(p, d.config) : 0;  // null only for a trusted unloaded entry
  };
  auto hit_of = [&](const detail::StoredEntry& e, bool exact) {
    return TuningHit{*e.entry, *e.layer_path, *e.device_key, *e.problem_key, e.level, exact};
  };
  // The first-use race's runner-up: the decision without this variant.
  auto excluded = [&](const std::string& variant) {
    return loo && std::find(loo->excluded_variants.begin(), loo->excluded_variants.end(), variant) !=
                      loo->excluded_variants.end();
  };
  auto entry_ok = [&](const TuningEntry& entry, std::string* why) {
    if (excluded(entry.variant)) {
      if (why) *why = "excluded (the race's runner-up)";
      return false;
    }
    if (loo && loo->trust_entries) return true;
    return entry_usable(entry, p, device, why);
  };

  std::vector<detail::StoredEntry> evidence;
  if (p.schema) evidence = detail::entries_in_class(*db_, device, op, p);
  if (loo)
    evidence.erase(std::remove_if(evidence.begin(), evidence.end(),
                                  [&](const detail::StoredEntry& e) { return *e.problem_key == loo->left_out; }),
                   evidence.end());
  const std::string key = p.key();

  // Entries come ordered by level; [begin, end) of each level, in order.
  using Level = std::pair<std::size_t, std::size_t>;
  auto levels_of = [](const std::vector<detail::StoredEntry>& entries) {
    std::vector<Level> out;
    for (std::size_t begin = 0; begin < entries.size();) {
      std::size_t end = begin;
      while (end < entries.size() && entries[end].level == entries[begin].level) ++end;
      out.emplace_back(begin, end);
      begin = end;
    }
    return out;
  };
  const std::vector<Level> levels = levels_of(evidence);
  // The entries of one level of `entries` other than the exact key, nearest first, within the
  // radius or past it.
  auto entries_by_distance = [&](const std::vector<detail::StoredEntry>& entries, Level range, bool within_radius) {
    std::vector<const detail::StoredEntry*> out;
    for (std::size_t i = range.first; i < range.second; ++i) {
      const detail::StoredEntry& e = entries[i];
      if (*e.problem_key == key || (e.distance <= detail::kNeighbourRadius) != within_radius) continue;
      out.push_back(&e);
    }
    return detail::nearest_first(std::move(out));  // layer order (user first) breaks exact ties
  };
  auto by_distance = [&](Level range, bool within_radius) { return entries_by_distance(evidence, range, within_radius); };
  auto current_build = [&](const TuningEntry& e) {
    const Variant* v = registry_->find_variant(e.variant);
    if (!v || v->op() != op) return false;
    const Source& src = registry_->source_of(*v);
    return e.plugin_build.empty() || src.build_id.empty() || e.plugin_build == src.build_id;
  };
  // A vendor variant's config picks among the library's own choices for the tuned problem
  // (cuBLASLt's algo: the n-th algorithm of its heuristic's list for that shape), which says
  // nothing about another shape: past kVendorConfigRadius the library's heuristic decides for
  // this problem (measured: docs/performance.md, third session).
  auto own_vendor_config = [&](const Variant& v, const detail::StoredEntry& e, Config& config) {
    if (!v.desc().vendor || e.distance <= detail::kVendorConfigRadius) return;
    Config own = v.default_config_for(device, p);
    if (own == config || !usable(v, own, p, device, nullptr)) return;
    d.config_note = "the library's own choice for this problem (default [" + own.to_string() +
                    "]), not the neighbour's [" + config.to_string() + "]: a vendor config names a choice for "
                    "the tuned shape only";
    config = std::move(own);
  };
  std::size_t listed_neighbours = 0;
  auto try_neighbours = [&](const std::vector<const detail::StoredEntry*>& entries, Decision::Evidence ev) {
    for (const detail::StoredEntry* e : entries) {
      std::string why;
      if (entry_ok(*e->entry, &why)) {
        d.hit = hit_of(*e, false);
        d.distance = e->distance;
        const Variant* v = registry_->find_variant(e->entry->variant);
        Config config = e->entry->config;
        if (v) own_vendor_config(*v, *e, config);
        finish(v, std::move(config), ev);
        return true;
      }
      if (listed_neighbours++ < kMaxListedNeighbours)
        d.rejected.emplace_back(std::string(ev == Decision::Evidence::neighbour ? "neighbour " : "far neighbour ") +
                                    *e->problem_key + " " + e->entry->variant + " [" + e->entry->config.to_string() + "]",
                                why);
    }
    return false;
  };
  // The neighbours within the radius, weighed (evidence.hpp, weigh_neighbours): the nearest
  // kWeighedNeighbours whose plugin build is current vote with their winners' and alternatives'
  // times; the variant expected to lose least runs at the config of the nearest neighbour that
  // timed it and whose config fits p, else at its default for p.
  auto weigh = [&](const std::vector<const detail::StoredEntry*>& entries, Decision::Evidence ev) {
    const bool trust = loo && loo->trust_entries;
    std::vector<const detail::StoredEntry*> counted;
    for (const detail::StoredEntry* e : entries) {
      if (counted.size() == detail::kWeighedNeighbours) break;
      std::string why;
      if (trust || current_build(*e->entry)) {
        counted.push_back(e);
      } else if (listed_neighbours++ < kMaxListedNeighbours) {
        entry_usable(*e->entry, p, device, &why);
        d.rejected.emplace_back("neighbour " + *e->problem_key + " " + e->entry->variant, why);
      }
    }
    if (counted.empty()) return false;
    const detail::AlternativeFilter current_alternative = [&](const TunedAlternative& a) {
      return trust || alternative_current(a);
    };
    const auto scores = detail::weigh_neighbours(counted, current_alternative, &p);
    auto record = [&] {
      d.weighed_neighbours = static_cast<int>(counted.size());
      for (const auto& sc : scores) d.weighed.emplace_back(sc.variant, sc.expected_ratio);
    };
    for (const auto& sc : scores) {
      const Variant* v = registry_->find_variant(sc.variant);
      if ((!v && !trust) || (v && v->op() != op) || excluded(sc.variant)) continue;
      // The config of the nearest neighbour that timed the variant at a config fitting p; among
      // equally near ones (detail::equally_near), one where the variant won.
      const detail::StoredEntry* source = nullptr;
      double us = 0;
      const Config* stored = nullptr;
      Config chosen;
      for (const detail::StoredEntry* e : counted) {
        double e_us = 0;
        const Config* e_stored = nullptr;
        if (!detail::time_of(*e->entry, sc.variant, &e_us, &e_stored, current_alternative)) continue;
        if (source && !detail::equally_near(*source, *e)) break;
        if (source && e->entry->variant != sc.variant) continue;
        Config e_config = *e_stored;
        if (v) {
          own_vendor_config(*v, *e, e_config);
          std::string why;
          if (!usable(*v, e_config, p, device, &why)) {
            if (listed_neighbours++ < kMaxListedNeighbours)
              d.rejected.emplace_back("neighbour " + *e->problem_key + " " + sc.variant + " [" + e_config.to_string() + "]", why);
            continue;
          }
        }
        source = e;
        us = e_us;
        stored = e_stored;
        chosen = std::move(e_config);
        if (e->entry->variant == sc.variant) break;  // a winner's config: nothing equally near beats it
      }
      if (source) {
        const detail::StoredEntry* e = source;
        d.hit = hit_of(*e, false);
        if (e->entry->variant != sc.variant) {
          d.hit->alternative_of = e->entry->variant;
          d.hit->entry.variant = sc.variant;
          d.hit->entry.config = *stored;
          d.hit->entry.median_us = us;
          d.hit->entry.mad_us = 0;
          d.hit->entry.samples = 0;
        }
        d.distance = e->distance;
        record();
        finish(v, std::move(chosen), ev);
        return true;
      }
      if (!v) continue;
      Config config = v->default_config_for(device, p);
      std::string why;
      if (!usable(*v, config, p, device, &why)) {
        d.rejected.emplace_back("weighed " + sc.variant + " at its default [" + config.to_string() + "]", why);
        continue;
      }
      d.hit = hit_of(*counted.front(), false);
      d.distance = counted.front()->distance;
      d.config_note = "no neighbour's config of " + sc.variant + " fits this problem";
      record();
      finish(v, std::move(config), ev == Decision::Evidence::neighbour ? Decision::Evidence::neighbour_variant : ev);
      return true;
    }
    return false;
  };

  // No neighbour's config fits p (a row longer than the tuned tiles, a misaligned view): the
  // nearest neighbour's variant is still the evidence for which kernel wins here; it runs at its
  // default for p (default_config_for adapts it to the problem) rather than a far entry's winner.
  auto try_neighbour_variants = [&](const std::vector<const detail::StoredEntry*>& entries) {
    for (const detail::StoredEntry* e : entries) {
      const Variant* v = registry_->find_variant(e->entry->variant);
      if (!v || !current_build(*e->entry) || excluded(v->name())) continue;
      Config config = v->default_config_for(device, p);
      if (!usable(*v, config, p, device, nullptr)) continue;
      d.hit = hit_of(*e, false);
      d.distance = e->distance;
      d.config_note = "the neighbour's config [" + e->entry->config.to_string() + "] does not fit this problem";
      finish(v, std::move(config), Decision::Evidence::neighbour_variant);
      return true;
    }
    return false;
  };

  // Stale entries (their plugin was rebuilt since they were tuned: a user file from an older kiln,
  // a plugin edited and not yet re-tuned): the configs may not exist any more, but which variants
  // won is still better evidence than none.  The nearest kWeighedNeighbours at the first level
  // that has any (within the radius when `near_only`) are weighed; the best variant that runs p
  // runs at its default for p.  Measured on the H200 (docs/performance.md, fourth session): with
  // every topk entry stale, the vendor fallback (a CUB sort) had a geomean regret of 10.5 over 11
  // held-out problems, these variants at their defaults about 1.3.  Since the sixth session stale
  // entries within the radius come before a current entry past it: on an H100 with the histogram
  // plugin rebuilt, far vendor-won entries sent 12 held-out histogram problems to CUB at a geomean
  // of 2.06 (up to 10.6x), while the stale rule scored 1.16 on the top-k ones.
  auto try_stale = [&](bool near_only) {
    if (loo && loo->trust_entries) return false;
    for (const auto& range : levels) {
      std::vector<const detail::StoredEntry*> stale;
      for (std::size_t i = range.first; i < range.second; ++i)
        if (!current_build(*evidence[i].entry) && (!near_only || evidence[i].distance <= detail::kNeighbourRadius))
          stale.push_back(&evidence[i]);
      if (stale.empty()) continue;
      stale = detail::nearest_first(std::move(stale));
      if (stale.size() > detail::kWeighedNeighbours) stale.resize(detail::kWeighedNeighbours);
      const auto scores = detail::weigh_neighbours(stale, nullptr, &p);
      for (const auto& sc : scores) {
        const Variant* v = registry_->find_variant(sc.variant);
        if (!v || v->op() != op || excluded(v->name())) continue;
        Config config = v->default_config_for(device, p);
        if (!usable(*v, config, p, device, nullptr)) continue;
        d.hit = hit_of(*stale.front(), false);
        d.distance = stale.front()->distance;
        d.weighed_neighbours = static_cast<int>(stale.size());
        for (const auto& x : scores) d.weighed.emplace_back(x.variant, x.expected_ratio);
        d.config_note = "its default: the stale entries' configs were tuned for another build";
        finish(v, std::move(config), Decision::Evidence::stale_neighbours);
        return true;
      }
      return false;  // the most specific level with stale entries decides, like the other rules
    }
    return false;
  };

  // 1. Tuned entries, level by level: the exact key, then the neighbours within the radius, weighed.
  for (const auto& range : levels) {
    for (std::size_t i = range.first; i < range.second; ++i) {
      const detail::StoredEntry& e = evidence[i];
      if (*e.problem_key != key) continue;
      std::string why;
      if (entry_ok(*e.entry, &why)) {
        d.hit = hit_of(e, true);
        finish(registry_->find_variant(e.entry->variant), e.entry->config, Decision::Evidence::exact_entry);
        return d;
      }
      d.rejected.emplace_back("database entry " + e.entry->variant + " [" + e.entry->config.to_string() + "]", why);
    }
    const auto near = by_distance(range, true);
    if (weigh(near, Decision::Evidence::neighbour)) return d;
    if (try_neighbours(near, Decision::Evidence::neighbour)) return d;
    if (!(loo && loo->trust_entries) && try_neighbour_variants(near)) return d;
  }

  // 1b. No usable entry within the radius, but stale ones: their variants at their defaults.
  if (try_stale(true)) return d;

  // 1c. No entry of the class within the radius: the tuned neighbours of its sibling classes
  // (evidence.hpp, sibling_mode_class: the same modes, f16 for bf16, i32 for f32), weighed, level
  // by level.  Leave-one-out over the H200 database (docs/performance.md, seventh session): a far
  // neighbour of the class sent bf16 top-k 4096x1024 k=8 largest=0 to radix select at 8.9x the
  // best, where the f16 entry of the same shape says warp select.
  std::vector<detail::StoredEntry> siblings;
  if (p.schema) siblings = detail::entries_in_class(*db_, device, op, p, detail::ClassRelation::sibling);
  const std::vector<Level> sibling_levels = levels_of(siblings);
  for (const Level& range : sibling_levels) {
    const auto near = entries_by_distance(siblings, range, true);
    if (weigh(near, Decision::Evidence::sibling_neighbour)) return d;
    if (try_neighbours(near, Decision::Evidence::sibling_neighbour)) return d;
  }

  // 2. No usable entry within the radius: the nearest usable entry of the class at any distance,
  // at the most specific level that has one.  Measured on the H200 (docs/performance.md), a far
  // neighbour's winner beats the cost model's pick: the model only knows each winner's rate, not
  // the shape effects (one row, odd extents, small k) that decide between variants.
  for (const auto& range : levels)
    if (try_neighbours(by_distance(range, false), Decision::Evidence::far_neighbour)) return d;

  // 3. No entry of the class is usable (configs that do not fit p, variants not loaded): the cost
  // model, calibrated from the class's entries (of any distance), estimates variants at their
  // nearest entry's config or their default.
  auto runnable = [&](const Variant& v, const Config& c) { return !excluded(v.name()) && usable(v, c, p, device, nullptr); };
  const auto estimates = detail::model_estimates(evidence, p, device, *registry_, current_build, runnable);
  if (!estimates.empty()) {
    for (const auto& m : estimates) d.estimates.emplace_back(m.variant->name(), m.predicted_us);
    d.predicted_us = estimates.front().predicted_us;
    finish(estimates.front().variant, estimates.front().config, Decision::Evidence::model);
    return d;
  }

  // 4. Every entry of the class is stale (the stale rule above found none within the radius): the
  // nearest stale entries at any distance.
  if (try_stale(false)) return d;

  // 4b. No entry of the class at all: the nearest usable sibling entry past the radius (those
  // within it were tried by 1c).  Measured
  // on the H200 with every bf16 entry and the f32 add/transpose/reduce_sum ones taken out of the
  // database (docs/performance.md, seventh session): the vendor fallback ran 11 held-out problems
  // of those classes at a geomean regret of 2.39 (add 1 x 2^28 15.6x, bf16 add 1 x 1000003 6.9x).
  for (const Level& range : sibling_levels)
    if (try_neighbours(entries_by_distance(siblings, range, false), Decision::Evidence::sibling_neighbour)) return d;

  // 5. No evidence: the vendor library, then 6. the variants in priority order.
  const auto all = registry_->variants(op);
  for (bool vendor_pass : {true, false}) {
    for (const Variant* v : all) {
      if (v->desc().vendor != vendor_pass || excluded(v->name())) continue;
      if (v->desc().reference && device.device.is_cuda()) continue;
      const Config config = v->default_config_for(device, p);
      std::string why;
      if (usable(*v, config, p, device, &why)) {
        finish(v, config, vendor_pass ? Decision::Evidence::vendor_fallback : Decision::Evidence::priority);
        return d;
      }
      d.rejected.emplace_back(v->name(), why);
    }
  }
  return d;  // d.variant == nullptr: nothing supports p
}

const Decision& Dispatcher::decide(const Problem& p, const DeviceInfo& device) {
  check_hand_made(p);
  if (const Decision* hit = find(p)) return *hit;
  // Misses are serialised: the database is read here and, in lazy mode, written by the tuner.
  std::lock_guard<std::recursive_mutex> miss_lock(miss_mutex_);
  if (const Decision* hit = find(p)) return *hit;  // another thread decided p meanwhile
  check_problem(p, "Dispatcher::decide");  // before the observer reads it
  if (observer_) observer_(p);
  auto node = std::make_unique<Node>();
  node->problem = p;
  node->hash = p.hash();
  node->generation = generation_.load(std::memory_order_relaxed);
  Decision& d = node->decision;
  d = decide_impl(p, device, nullptr);  // p was checked above
  if (d.evidence != Decision::Evidence::exact_entry && miss_handler_) {
    if (auto tuned = miss_handler_(p, device, d)) {
      d = std::move(*tuned);
      if (!d.raced) {  // a race keeps the source and evidence of the decision it kept (race_note says more)
        d.from = Decision::From::tuned_now;
        d.evidence = Decision::Evidence::tuned_now;
      }
    }
  }
  if (!d.variant) {
    std::string msg = "no variant of '" + (p.schema ? p.schema->name : std::string("?")) + "' supports " + p.key() +
                      " on " + device.device.to_string() + ":";
    if (d.rejected.empty()) msg += " no variants are registered for this op";
    for (const auto& [what, why] : d.rejected) msg += "\n  " + what + ": " + why;
    throw NoVariantError(msg);
  }
  d.launch = d.variant->prepare(p, d.config, device);
  if (!d.launch) d.launch = d.variant->Variant::prepare(p, d.config, device);
  logger()->debug("dispatch {} {} -> {} [{}] ({})", p.schema ? p.schema->name : "?", p.key(), d.variant->name(),
                  d.config.to_string(), evidence_name(d.evidence));
  nodes_.push_back(std::move(node));
  insert_locked(nodes_.back().get());
  return nodes_.back()->decision;
}

}  // namespace kiln
