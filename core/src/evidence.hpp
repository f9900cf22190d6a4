// The evidence dispatch chooses from when a problem has no exact tuned entry (docs/architecture.md,
// "Dispatch from evidence"): the stored entries of the problem's mode class, their distance in
// log-size space, and a small cost model calibrated from them.  Internal to the core.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/op_schema.hpp"
#include "kiln/registry.hpp"
#include "kiln/tuning_db.hpp"

namespace kiln::detail {

// Neighbours farther than this (Euclidean distance over log2 of the size dims) are not evidence:
// 3 is a factor 8 in one dim, or about 3.3 in each of three, so every shape inside the coverage
// plan's grid (sizes a factor 8 apart) has a neighbour.  Measured on the H200 over the held-out
// set (docs/performance.md): neighbours chosen this way had a geomean regret of 1.02, the cost
// model 1.84, so a farther neighbour is preferred to the model.  Past the radius the nearest
// usable entry still decides (a "far neighbour", reported as such; 1.08 on the held-out set
// where the model had 3.39); the radius only says which evidence is near.
inline constexpr double kNeighbourRadius = 3.0;

// A vendor variant's tuned config (cuBLASLt's algo: a position in its heuristic's list for the
// tuned shape) is used for shapes within this distance only (0.1, kTieBand: every extent within
// about 7 %); farther, the vendor variant runs at its default (the library's heuristic for the
// caller's shape).  Measured on the H200 held-out sets (docs/performance.md): past 0.5, 10 of 12
// neighbours' algos were slower than algo 0 (third session); between 0.1 and 0.5 all three
// measured were (bf16 16384 x 5120 x 4096 at 0.32 and 16384 x 5120 x 5120 at 0.46 from
// 16384 x 4096 x 4096: 1.07x to 1.12x, eighth and tenth sessions); at 0.0005 (4097 x 1 x 4095)
// the neighbour's algo 2 was 1.11x to 1.12x faster.
inline constexpr double kVendorConfigRadius = 0.1;

// Whether a and b have the same dtype and the same value in every mode dim of `s`.
bool same_mode_class(const OpSchema& s, const Problem& a, const Problem& b);
// Whether b's class is a sibling of a's: the same mode dims, another dtype of the same width (f16
// and bf16, f32 and i32).  Kernels move the same bytes and take the same paths there, so a
// sibling's tuned neighbour is better evidence than the problem's own class far away
// (docs/architecture.md, "Dispatch from evidence", rule 4).  Mode dims are never crossed: letting
// one mirror or layout mode differ as well (topk's largest, gemm's tb) scored the same.
bool sibling_mode_class(const OpSchema& s, const Problem& a, const Problem& b);
// Euclidean distance over log2 of the size dims (extents below 1 count as 1), so aspect ratio
// counts as much as size: 4096x64 and 64x4096 are far apart.  Mode dims are not part of it.
double size_distance(const OpSchema& s, const Problem& a, const Problem& b);

// Entries whose distances differ by at most this much are equally near: among them the one whose
// extents divide like the problem's comes first (divisibility_distance).  Odd extents against
// multiples of 16 decide between kernels (vector widths, alignment, cuBLAS paths): on the H200,
// transpose 4097x4099 ran 1.14x slower from the 4096x4096 entry (distance 0.001) than from the
// 4095x4095 one (0.002).  Small, so it only orders near ties.
inline constexpr double kTieBand = 0.1;

// Sum over the size dims of the difference in factors of two (each counted up to 4: divisible
// by 16), e.g. 4097x4099 against 4096x4096: 8, against 4095x4095: 0.
int divisibility_distance(const OpSchema& s, const Problem& a, const Problem& b);

// One stored entry of the problem's op and mode class, with the problem its key names.
struct StoredEntry {
  const TuningEntry* entry = nullptr;
  const std::string* layer_path = nullptr;
  const std::string* device_key = nullptr;
  const std::string* problem_key = nullptr;
  FallbackLevel level = FallbackLevel::exact;
  Problem problem;      // the stored key parsed with p's schema, device and alignment
  double distance = 0;  // size_distance to p
  int divisibility = 0;  // divisibility_distance to p
};

// Whether b is as near to the problem as a: within kTieBand and dividing alike (the order
// nearest_first puts them in cannot tell them apart).  Among equally near neighbours that timed
// the variant dispatch runs, the config comes from one where that variant won: a winner's config
// was re-timed against the other finalists, an alternative's is only the variant's best in a
// search of a few evaluations, or older (H200, ninth session: histogram u8 n = 2^25 - 1 ran
// thread_private at the 2^24 entry's alternative config, timed with a build before the hist9
// kernels as it turned out, 1.20x slower than at the 2^26 entry's winning one).
bool equally_near(const StoredEntry& a, const StoredEntry& b);

// Weighing the neighbours (docs/architecture.md, "Weighing the neighbours"): the nearest
// kWeighedNeighbours usable entries within the radius each say how much slower than their best
// each variant ran there (their winner and `alternatives`); dispatch runs the variant whose
// weighted geometric mean of those ratios is lowest, weight 1 / ((distance + kWeightOffset) *
// (1 + kDivisibilityWeight * divisibility distance)).
// A variant an entry has no time for (not timed there: failed, declined or given up) counts
// kMissingRatio there.  An entry with no current alternative (tuned before alternatives were
// stored, or its alternatives' plugins rebuilt since) says who won but not by how much: it votes
// only when none of the neighbours compares variants (measured on the H200 held-out set, fifth
// session: histogram_range n=100003 bins=7 ran warp_private, 1.15x, on two winners-only entries
// against the one entry that timed both).  Chosen by leave-one-out over the H200 coverage
// database (kiln db loo; docs/performance.md, fourth session): against the nearest entry's
// winner, geomean regret 1.037 -> 1.021 and entries above 1.10 78 -> 35 of 875; 4 to 8
// neighbours and offsets 0.5 to 1 score alike, a max-ratio penalty scores worse.  The
// divisibility weight costs one entry there (the grid has few odd extents) and is what the
// held-out odd shapes measured (kTieBand): 4097x4099 takes the 4095x4095 entry's word.
// Sixth session: each variant's log-ratio is fitted, not averaged: a weighted linear fit over the
// neighbours' log2 offsets per size dim (slopes under a ridge penalty kSlopeRidge x the weights'
// sum), read at the problem and clamped to the neighbours' own ratios, so a variant falling behind
// as n grows is expected further behind past the neighbours, not at their mean (a kernel's tile
// step or a capability limit shows as such a trend on the grid).  Leave-one-out over the shipped
// H200 database (1620 entries): weighted mean of 6: geomean 1.019, 87 above 1.10; fitted over 10:
// 1.016, 75 (topk 1.053 -> 1.038, gemm 1.016 -> 1.014, transpose 1.021 -> 1.018; add 1.005 ->
// 1.006); 6 to 16 neighbours and ridges 0.1 to 1 score 1.016-1.017, 75-84; the mean of 10 scores
// 1.018, 82.
// Tenth session: kWeightOffset 1 -> 0.5, so a neighbour at almost the problem's size (2^28 for
// 2^28 - 1) outweighs the next grid points more (5:1 against one at distance 2, was 3:1).
// Leave-one-out cannot see it (the grid has no near-duplicates: 1.012 with 57 above 1.10 at both
// offsets); scored offline against the ninth session's measured held-out runs (scripts/
// offline_regret.py), H100 times 1.0054 with 3 above 1.10 -> 1.0046 with 2, H200 histogram runs
// 1.0053 -> 1.0006: histogram_range n = 2^28 - 1 with 256 bins no longer runs warp_private
// (1.12x-1.22x) on the word of the bins = 1024 entry over the n = 2^28 entry's own timings.
inline constexpr std::size_t kWeighedNeighbours = 10;
inline constexpr double kSlopeRidge = 1.0;
inline constexpr double kWeightOffset = 0.5;
inline constexpr double kMissingRatio = 2.0;
inline constexpr double kDivisibilityWeight = 0.25;

struct VariantScore {
  std::string variant;
  double expected_ratio = 0;  // weighted geometric mean over the neighbours of time / their best
  int timed_at = 0;           // how many of the neighbours have a time for it
};

// The variants named by `near` (nearest first; the caller keeps at most kWeighedNeighbours),
// lowest expected ratio first; exact ties keep the order of first mention (the nearest entry's
// winner first).  Entries with no positive time are skipped; so are entries without a current
// alternative when another entry has one.
// `current` (when set) says whether an alternative's time is for the loaded build of its plugin;
// one that is not counts as no time.
using AlternativeFilter = std::function<bool(const TunedAlternative&)>;
std::vector<VariantScore> weigh_neighbours(const std::vector<const StoredEntry*>& near,
                                           const AlternativeFilter& current = nullptr, const Problem* at = nullptr);

// The log-ratio a weighted local linear fit over the neighbours' offsets (log2 per size dim)
// predicts at offset 0, with a ridge penalty `ridge` x (sum of weights) on the slopes; clamped to
// the neighbours' own range.
double local_linear_log_ratio(const std::vector<std::vector<double>>& offsets, const std::vector<double>& weights,
                              const std::vector<double>& ys, double ridge);

// The time `entry` holds for `variant` (its winner's or an alternative's) and that config; false
// when it holds none.
bool time_of(const TuningEntry& entry, const std::string& variant, double* us, const Config** config,
             const AlternativeFilter& current = nullptr);

// `entries` nearest first (stable: layer order breaks exact ties), except that within kTieBand of
// an entry's distance the one with the smallest divisibility distance comes first.
std::vector<const StoredEntry*> nearest_first(std::vector<const StoredEntry*> entries);

// Every entry of `op` whose key parses with p's schema into p's mode class (into a sibling class,
// sibling_mode_class, with ClassRelation::sibling), on device keys
// matching `device` at some fallback level (each key at its most specific level).  Ordered by
// level, then layer (user first), then distance, then key.  Keys of another mode class, or that
// do not parse with the schema's dim names, are skipped.
enum class ClassRelation { same, sibling };  // sibling: sibling_mode_class
std::vector<StoredEntry> entries_in_class(const TuningDb& db, const DeviceInfo& device, const std::string& op,
                                          const Problem& p, ClassRelation relation = ClassRelation::same);

// The cost model: per variant, time = overhead + work / (rate * wave efficiency), fitted by least
// squares to the tuned times of the variant's entries in the class.  The database stores winners
// only, so a variant that never won in this class has no estimate.
struct ModelEstimate {
  const Variant* variant = nullptr;
  Config config;            // from the variant's nearest entry when usable for p, else its default
  double predicted_us = 0;
  int points = 0;           // entries the fit used
};

// Fraction of the last wave of blocks that does work, for configs with BM and BN tiles on ops
// with m and n dims (1 otherwise): tiles / (waves * SMs).
double wave_efficiency(const OpSchema& s, const Problem& p, const Config& c, const DeviceInfo& device);

// Estimates for every variant with entries among `evidence` (usable: its variant is loaded and
// its build current) whose config `runnable` accepts for p; sorted fastest first, ties by priority.
// `runnable(variant, config)` says whether the variant can run p with that config.
std::vector<ModelEstimate> model_estimates(const std::vector<StoredEntry>& evidence, const Problem& p,
                                           const DeviceInfo& device, const Registry& registry,
                                           const std::function<bool(const TuningEntry&)>& usable_entry,
                                           const std::function<bool(const Variant&, const Config&)>& runnable);

}  // namespace kiln::detail
