#include "evidence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <tuple>

#include "kiln/dtype.hpp"

namespace kiln::detail {
namespace {

constexpr FallbackLevel kLevels[] = {FallbackLevel::exact, FallbackLevel::arch_and_sms, FallbackLevel::arch,
                                     FallbackLevel::any};

// The most specific level at which `stored` matches `device`; false when none does.
bool level_of(const std::string& stored, const DeviceInfo& device, FallbackLevel& out) {
  for (FallbackLevel l : kLevels)
    if (fingerprint_matches(stored, device, l)) {
      out = l;
      return true;
    }
  return false;
}

// `key` parsed with p's schema: the same dim names in the same order.
bool parse_with_schema(const std::string& key, const Problem& p, Problem& out) {
  ParsedKey k;
  if (!p.schema || !parse_problem_key(key, k) || k.n_dims != p.n_dims) return false;
  for (int i = 0; i < k.n_dims; ++i) {
    if (i >= static_cast<int>(p.schema->dim_names.size()) || k.names[i] != p.schema->dim_names[i]) return false;
    // A size below 0 is no problem's (a hand-edited key): its log2 distance would read it as 1.
    if (k.dims[i] < 0 && !p.schema->is_mode_dim(i)) return false;
  }
  out = p;
  out.dtype = k.dtype;
  for (int i = 0; i < k.n_dims; ++i) out.dims[i] = k.dims[i];
  return true;
}

double log2_extent(std::int64_t v) { return std::log2(static_cast<double>(v < 1 ? 1 : v)); }

struct Fit {
  double overhead_us = 0;
  double us_per_work = 0;
  int points = 0;
};

// time = a + c * x by least squares (x = work / wave efficiency); falls back to a line through the
// origin when the fit is not physical (negative overhead or non-positive cost per unit of work).
Fit fit_line(const std::vector<std::pair<double, double>>& xt) {
  Fit f;
  f.points = static_cast<int>(xt.size());
  if (xt.empty()) return f;
  double sx = 0, st = 0;
  for (const auto& [x, t] : xt) sx += x, st += t;
  const double mx = sx / xt.size(), mt = st / xt.size();
  double sxx = 0, sxt = 0;
  for (const auto& [x, t] : xt) sxx += (x - mx) * (x - mx), sxt += (x - mx) * (t - mt);
  if (xt.size() >= 2 && sxx > 0) {
    const double c = sxt / sxx;
    const double a = mt - c * mx;
    if (c > 0 && a >= 0) {
      f.us_per_work = c;
      f.overhead_us = a;
      return f;
    }
  }
  double num = 0, den = 0;
  for (const auto& [x, t] : xt) num += t * x, den += x * x;
  f.us_per_work = den > 0 ? num / den : 0;
  f.overhead_us = 0;
  return f;
}

// Factors of two in an extent, at most 4 (divisible by 16); 0 for extents below 1.
int twos_in(std::int64_t extent) {
  int t = 0;
  while (extent > 0 && t < 4 && extent % 2 == 0) extent /= 2, ++t;
  return t;
}

}  // namespace

bool same_mode_class(const OpSchema& s, const Problem& a, const Problem& b) {
  if (a.dtype != b.dtype || a.n_dims != b.n_dims) return false;
  for (int i = 0; i < a.n_dims; ++i)
    if (s.is_mode_dim(i) && a.dims[i] != b.dims[i]) return false;
  return true;
}

bool sibling_mode_class(const OpSchema& s, const Problem& a, const Problem& b) {
  if (a.n_dims != b.n_dims || a.dtype == b.dtype || dtype_size(a.dtype) != dtype_size(b.dtype)) return false;
  for (int i = 0; i < a.n_dims; ++i)
    if (s.is_mode_dim(i) && a.dims[i] != b.dims[i]) return false;
  return true;
}

double size_distance(const OpSchema& s, const Problem& a, const Problem& b) {
  double d2 = 0;
  for (int i = 0; i < a.n_dims && i < b.n_dims; ++i) {
    if (s.is_mode_dim(i)) continue;
    const double d = log2_extent(a.dims[i]) - log2_extent(b.dims[i]);
    d2 += d * d;
  }
  return std::sqrt(d2);
}

int divisibility_distance(const OpSchema& s, const Problem& a, const Problem& b) {
  int sum = 0;
  for (int i = 0; i < a.n_dims && i < b.n_dims; ++i)
    if (!s.is_mode_dim(i)) sum += std::abs(twos_in(a.dims[i]) - twos_in(b.dims[i]));
  return sum;
}

bool equally_near(const StoredEntry& a, const StoredEntry& b) {
  return std::fabs(b.distance - a.distance) <= kTieBand && b.divisibility == a.divisibility;
}

std::vector<const StoredEntry*> nearest_first(std::vector<const StoredEntry*> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const StoredEntry* a, const StoredEntry* b) { return a->distance < b->distance; });
  // Within each band of equally near entries, the one that divides like the problem first.
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::size_t pick = i;
    for (std::size_t j = i + 1; j < entries.size() && entries[j]->distance <= entries[i]->distance + kTieBand; ++j)
      if (entries[j]->divisibility < entries[pick]->divisibility) pick = j;
    std::rotate(entries.begin() + static_cast<std::ptrdiff_t>(i), entries.begin() + static_cast<std::ptrdiff_t>(pick),
                entries.begin() + static_cast<std::ptrdiff_t>(pick) + 1);
  }
  return entries;
}

std::vector<StoredEntry> entries_in_class(const TuningDb& db, const DeviceInfo& device, const std::string& op,
                                          const Problem& p, ClassRelation relation) {
  std::vector<StoredEntry> out;
  std::vector<std::size_t> layer_of;
  if (!p.schema) return out;
  const auto& layers = db.layers();
  for (std::size_t li = 0; li < layers.size(); ++li) {
    for (const auto& [dev, ops] : layers[li].table) {
      FallbackLevel level;
      if (!level_of(dev, device, level)) continue;
      auto it = ops.find(op);
      if (it == ops.end()) continue;
      for (const auto& [key, entry] : it->second) {
        StoredEntry e;
        if (!parse_with_schema(key, p, e.problem)) continue;
        if (!(relation == ClassRelation::same ? same_mode_class(*p.schema, p, e.problem)
                                              : sibling_mode_class(*p.schema, p, e.problem)))
          continue;
        e.entry = &entry;
        e.layer_path = &layers[li].path;
        e.device_key = &dev;
        e.problem_key = &key;
        e.level = level;
        e.distance = size_distance(*p.schema, p, e.problem);
        e.divisibility = divisibility_distance(*p.schema, p, e.problem);
        out.push_back(std::move(e));
        layer_of.push_back(li);
      }
    }
  }
  std::vector<std::size_t> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const StoredEntry& a = out[x];
    const StoredEntry& b = out[y];
    return std::make_tuple(static_cast<int>(a.level), layer_of[x], a.distance, *a.problem_key, *a.device_key) <
           std::make_tuple(static_cast<int>(b.level), layer_of[y], b.distance, *b.problem_key, *b.device_key);
  });
  std::vector<StoredEntry> sorted;
  sorted.reserve(out.size());
  for (std::size_t i : order) sorted.push_back(std::move(out[i]));
  return sorted;
}

bool time_of(const TuningEntry& entry, const std::string& variant, double* us, const Config** config,
             const AlternativeFilter& current) {
  if (entry.variant == variant) {
    if (us) *us = entry.median_us;
    if (config) *config = &entry.config;
    return true;
  }
  for (const TunedAlternative& a : entry.alternatives)
    if (a.variant == variant && (!current || current(a))) {
      if (us) *us = a.median_us;
      if (config) *config = &a.config;
      return true;
    }
  return false;
}

namespace {

// Solves the (n x n) system a x = b in place by Gaussian elimination with partial pivoting; false
// when it is singular.
bool solve(std::vector<double>& a, std::vector<double>& b, int n) {
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c])) piv = r;
    if (!(std::fabs(a[piv * n + c]) > 1e-12)) return false;
    if (piv != c) {
      for (int k = 0; k < n; ++k) std::swap(a[c * n + k], a[piv * n + k]);
      std::swap(b[c], b[piv]);
    }
    for (int r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    double v = b[c];
    for (int k = c + 1; k < n; ++k) v -= a[c * n + k] * b[k];
    b[c] = v / a[c * n + c];
  }
  return true;
}

}  // namespace

double local_linear_log_ratio(const std::vector<std::vector<double>>& offsets, const std::vector<double>& weights,
                              const std::vector<double>& ys, double ridge) {
  const std::size_t m = ys.size();
  double wsum = 0, mean = 0, lo = 0, hi = 0;
  for (std::size_t i = 0; i < m; ++i) {
    wsum += weights[i], mean += weights[i] * ys[i];
    lo = i == 0 ? ys[i] : std::min(lo, ys[i]);
    hi = i == 0 ? ys[i] : std::max(hi, ys[i]);
  }
  if (!(wsum > 0)) return 0;
  mean /= wsum;
  const int d = offsets.empty() ? 0 : static_cast<int>(offsets[0].size());
  const int n = d + 1;  // intercept, then one slope per size dim
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0), b(static_cast<std::size_t>(n), 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    std::vector<double> x(static_cast<std::size_t>(n), 1.0);
    for (int j = 0; j < d; ++j) x[static_cast<std::size_t>(j + 1)] = offsets[i][static_cast<std::size_t>(j)];
    for (int r = 0; r < n; ++r) {
      b[static_cast<std::size_t>(r)] += weights[i] * x[static_cast<std::size_t>(r)] * ys[i];
      for (int c = 0; c < n; ++c) a[static_cast<std::size_t>(r * n + c)] += weights[i] * x[static_cast<std::size_t>(r)] * x[static_cast<std::size_t>(c)];
    }
  }
  for (int j = 1; j < n; ++j) a[static_cast<std::size_t>(j * n + j)] += ridge * wsum;
  if (!solve(a, b, n)) return mean;
  // Between the neighbours' own ratios: a slope extrapolates no further than the evidence goes.
  return std::min(hi, std::max(lo, b[0]));
}

std::vector<VariantScore> weigh_neighbours(const std::vector<const StoredEntry*>& near, const AlternativeFilter& current,
                                           const Problem* at) {
  struct Entry {
    const StoredEntry* stored;
    double best_us, weight;
  };
  std::vector<Entry> used;
  std::vector<VariantScore> out;
  auto mention = [&](const std::string& v) {
    for (const VariantScore& s : out)
      if (s.variant == v) return;
    out.push_back(VariantScore{v, 0.0, 0});
  };
  auto compares = [&](const StoredEntry* e) {
    for (const TunedAlternative& a : e->entry->alternatives)
      if (a.median_us > 0 && (!current || current(a))) return true;
    return false;
  };
  // An entry that timed no other variant (tuned before alternatives were stored, or all of them
  // stale) says who won there but not by how much, so it votes only when no neighbour compares.
  const bool any_compares = std::any_of(near.begin(), near.end(), compares);
  for (const StoredEntry* e : near) {
    if (any_compares && !compares(e)) continue;
    double best = e->entry->median_us;
    for (const TunedAlternative& a : e->entry->alternatives)
      if (a.median_us > 0 && (!current || current(a)) && (!(best > 0) || a.median_us < best)) best = a.median_us;
    if (!(best > 0)) continue;
    used.push_back(Entry{e, best, 1.0 / ((e->distance + kWeightOffset) * (1 + kDivisibilityWeight * e->divisibility))});
    if (e->entry->median_us > 0) mention(e->entry->variant);
    for (const TunedAlternative& a : e->entry->alternatives)
      if (a.median_us > 0 && (!current || current(a))) mention(a.variant);
  }
  // Offsets of the neighbours from the problem in log2 of each size dim, for the local fit.
  // With `at` the ratios are fitted, not averaged: a variant whose ratio grows along a dim across
  // the neighbours is expected past them at the trend's value, bounded by what they measured.
  std::vector<std::vector<double>> offsets;
  std::vector<double> weights;
  const bool fit = at && at->schema && used.size() >= 2;
  if (fit) {
    for (const Entry& u : used) {
      std::vector<double> x;
      for (int i = 0; i < at->n_dims; ++i)
        if (!at->schema->is_mode_dim(i))
          x.push_back(log2_extent(u.stored->problem.dims[i]) - log2_extent(at->dims[i]));
      offsets.push_back(std::move(x));
      weights.push_back(u.weight);
    }
  }
  double total = 0;
  for (const Entry& u : used) total += u.weight;
  for (VariantScore& s : out) {
    double log_sum = 0;
    std::vector<double> ys;
    for (const Entry& u : used) {
      double us = 0;
      const bool timed = time_of(*u.stored->entry, s.variant, &us, nullptr, current) && us > 0;
      s.timed_at += timed;
      const double y = std::log(timed ? us / u.best_us : kMissingRatio);
      ys.push_back(y);
      log_sum += u.weight * y;
    }
    s.expected_ratio = total > 0 ? std::exp(log_sum / total) : kMissingRatio;
    if (fit) s.expected_ratio = std::exp(local_linear_log_ratio(offsets, weights, ys, kSlopeRidge));
  }
  std::stable_sort(out.begin(), out.end(), [](const VariantScore& a, const VariantScore& b) {
    // Equal to 7 digits is a tie: sums in another order round differently in the last bits.
    return static_cast<float>(a.expected_ratio) < static_cast<float>(b.expected_ratio);
  });
  return out;
}

double wave_efficiency(const OpSchema& s, const Problem& p, const Config& c, const DeviceInfo& device) {
  const int im = s.dim_index("m"), in = s.dim_index("n");
  if (im < 0 || in < 0 || im >= p.n_dims || in >= p.n_dims || device.sm_count <= 0 || !c.has("BM") || !c.has("BN"))
    return 1.0;
  const std::int64_t bm = c.get("BM"), bn = c.get("BN");
  if (bm <= 0 || bn <= 0) return 1.0;
  const double tiles = static_cast<double>((std::max<std::int64_t>(p.dims[im], 1) + bm - 1) / bm) *
                       static_cast<double>((std::max<std::int64_t>(p.dims[in], 1) + bn - 1) / bn);
  const double waves = std::ceil(tiles / device.sm_count);
  return tiles / (waves * device.sm_count);
}

std::vector<ModelEstimate> model_estimates(const std::vector<StoredEntry>& evidence, const Problem& p,
                                           const DeviceInfo& device, const Registry& registry,
                                           const std::function<bool(const TuningEntry&)>& usable_entry,
                                           const std::function<bool(const Variant&, const Config&)>& runnable) {
  std::vector<ModelEstimate> out;
  const OpSchema* s = p.schema;
  if (!s || !s->work) return out;
  // Calibrate on the most specific device level that has usable entries: times measured on
  // another GPU say little about this one when this one has its own.
  std::vector<const StoredEntry*> usable;
  for (const StoredEntry& e : evidence)
    if (usable_entry(*e.entry)) usable.push_back(&e);
  if (usable.empty()) return out;
  const FallbackLevel level = usable.front()->level;  // entries come ordered by level
  for (const Variant* v : registry.variants(s->name)) {
    std::vector<std::pair<double, double>> xt;
    const StoredEntry* nearest = nullptr;
    for (const StoredEntry* e : usable) {
      if (e->level != level || e->entry->variant != v->name()) continue;
      const double work = s->work(e->problem);
      const double eff = wave_efficiency(*s, e->problem, e->entry->config, device);
      if (!(work > 0) || !(e->entry->median_us > 0) || !(eff > 0)) continue;
      xt.emplace_back(work / eff, e->entry->median_us);
      if (!nearest || e->distance < nearest->distance) nearest = e;
    }
    if (xt.empty()) continue;
    const Fit fit = fit_line(xt);
    ModelEstimate m;
    m.variant = v;
    m.points = fit.points;
    if (runnable(*v, nearest->entry->config))
      m.config = nearest->entry->config;
    else if (Config d = v->default_config_for(device, p); runnable(*v, d))
      m.config = d;
    else
      continue;
    const double eff = wave_efficiency(*s, p, m.config, device);
    m.predicted_us = fit.overhead_us + fit.us_per_work * s->work(p) / (eff > 0 ? eff : 1.0);
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(), [](const ModelEstimate& a, const ModelEstimate& b) {
    // Estimates equal to 7 digits are a tie (the fits round differently in the last bits), and
    // priorities only break ties.
    const float ta = static_cast<float>(a.predicted_us), tb = static_cast<float>(b.predicted_us);
    if (ta != tb) return ta < tb;
    return a.variant->priority() > b.variant->priority();
  });
  return out;
}

}  // namespace kiln::detail
