#include "kiln/tuner/search_space.hpp"

#include <algorithm>
#include <random>
#include <set>

#include "kiln/errors.hpp"

namespace kiln {
namespace {

bool has_dtype(const Variant& v, DType t) {
  return v.dtypes().empty() || std::find(v.dtypes().begin(), v.dtypes().end(), t) != v.dtypes().end();
}

// Rejections grouped per (kind, reason), so a space restricted by ParamSpace::only() yields one
// line instead of thousands.
struct RejectionLog {
  std::vector<Rejection> groups;

  void add(const Variant& v, const Config& c, Rejection::Kind kind, const std::string& why) {
    for (Rejection& g : groups)
      if (g.kind == kind && g.reason == why) {
        ++g.configs;
        return;
      }
    groups.push_back({Candidate{&v, c, false}, kind, why, 1});
  }
  void flush(std::vector<Rejection>& out) {
    for (Rejection& g : groups) out.push_back(std::move(g));
    groups.clear();
  }
};

// The configs of v's space to consider: the instantiated list, the whole product, or a
// deterministic sample of the product when it is too large to enumerate.
std::vector<Config> product_of(const ParamSpace& space, const SpaceOptions& options, std::uint64_t salt) {
  // A space restricted by only(): its list is every config that can pass (gemm's register
  // blocked space: 13 rows instead of a product of 2304, 60 ms less per problem).
  if (const std::vector<Config>* list = space.instantiated()) return *list;
  std::vector<Config> out;
  const std::uint64_t n = space.count();
  if (n <= options.max_product) {
    out.reserve(static_cast<std::size_t>(n));
    for (std::uint64_t i = 0; i < n; ++i) out.push_back(space.at(i));
    return out;
  }
  std::mt19937_64 rng(options.seed ^ salt);
  std::set<std::uint64_t> picked;
  while (picked.size() < options.max_product) picked.insert(rng() % n);
  for (std::uint64_t i : picked) out.push_back(space.at(i));
  return out;
}

std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::optional<std::size_t> SearchSpace::find(const Variant* v, const Config& c) const {
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].variant == v && candidates[i].config == c) return i;
  return std::nullopt;
}

namespace {

// candidate_usable() with the kind of the first failed check.
bool usable_or_why(const Variant& v, const Config& config, const Problem& problem, const DeviceInfo& device,
                   std::string* why, Rejection::Kind* kind) {
  if (v.device_kind() != device.device.kind) {
    if (why) *why = std::string("runs on ") + device_kind_name(v.device_kind()) + ", the problem is on " + device.device.to_string();
    if (kind) *kind = Rejection::Kind::variant;
    return false;
  }
  if (!has_dtype(v, problem.dtype)) {
    if (why) *why = "does not support dtype " + std::string(dtype_name(problem.dtype));
    if (kind) *kind = Rejection::Kind::variant;
    return false;
  }
  if (auto bad = v.space().violated(config, device, problem)) {
    if (why) *why = *bad;
    if (kind) *kind = Rejection::Kind::constraint;
    return false;
  }
  const Support s = v.supports_or_no(problem, device, config);  // a throwing one: rejected, the search goes on
  if (!s.ok) {
    if (why) *why = s.reason.empty() ? std::string("not supported") : s.reason;
    if (kind) *kind = Rejection::Kind::unsupported;
    return false;
  }
  return true;
}

}  // namespace

std::string Rejection::to_string() const {
  std::string s = example.to_string();
  if (configs > 1) s += " (and " + std::to_string(configs - 1) + " more config" + (configs > 2 ? "s" : "") + ")";
  return s + ": " + reason;
}

bool candidate_usable(const Variant& v, const Config& config, const Problem& problem, const DeviceInfo& device,
                      std::string* why) {
  return usable_or_why(v, config, problem, device, why, nullptr);
}

SearchSpace build_search_space(const Registry& registry, const Problem& problem, const DeviceInfo& device,
                               const SpaceOptions& options) {
  if (!problem.schema) throw UnknownOpError("build_search_space: the problem has no op schema");
  SearchSpace space;
  std::vector<std::vector<Config>> rest;  // per admitted variant, the non-default configs
  std::vector<const Variant*> admitted;

  for (const Variant* v : registry.variants(problem.schema->name)) {
    if (!options.variants.empty() &&
        std::find(options.variants.begin(), options.variants.end(), v->name()) == options.variants.end())
      continue;
    ++space.variants_considered;
    RejectionLog log;
    const Config def = v->default_config_for(device, problem);
    auto reject_variant = [&](const std::string& why) {
      log.add(*v, def, Rejection::Kind::variant, why);
      log.flush(space.rejected);
    };
    if (v->device_kind() != device.device.kind) {
      reject_variant(std::string("runs on ") + device_kind_name(v->device_kind()) + ", the problem is on " +
                     device.device.to_string());
      continue;
    }
    // The host reference is the oracle: a speed candidate only when tuning for the host.
    if (v->desc().reference && !device.device.is_host()) {
      reject_variant("the host reference is a candidate only on the host");
      continue;
    }
    if (!has_dtype(*v, problem.dtype)) {
      reject_variant("does not support dtype " + std::string(dtype_name(problem.dtype)));
      continue;
    }

    std::vector<Config> valid;
    bool default_valid = false;
    for (Config& c : product_of(v->space(), options, name_hash(v->name()))) {
      std::string why;
      Rejection::Kind kind = Rejection::Kind::unsupported;
      if (!usable_or_why(*v, c, problem, device, &why, &kind)) {
        log.add(*v, c, kind, why);
        continue;
      }
      if (c == def) default_valid = true;
      valid.push_back(std::move(c));
    }
    // A default outside a sampled product is still tried.
    if (!default_valid && std::find(valid.begin(), valid.end(), def) == valid.end()) {
      std::string why;
      if (candidate_usable(*v, def, problem, device, &why)) {
        valid.insert(valid.begin(), def);
        default_valid = true;
      }
    }
    if (options.max_configs_per_variant > 0 && valid.size() > options.max_configs_per_variant) {
      // Deterministic sample that keeps the default config.
      std::vector<Config> others;
      for (Config& c : valid)
        if (!(default_valid && c == def)) others.push_back(std::move(c));
      std::mt19937_64 rng(options.seed ^ name_hash(v->name()));
      for (std::size_t i = others.size(); i > 1; --i) std::swap(others[i - 1], others[rng() % i]);
      const std::size_t keep = options.max_configs_per_variant - (default_valid ? 1 : 0);
      others.resize(std::min(keep, others.size()));
      std::sort(others.begin(), others.end());
      valid.clear();
      if (default_valid) valid.push_back(def);
      for (Config& c : others) valid.push_back(std::move(c));
    }
    log.flush(space.rejected);
    if (valid.empty()) continue;
    if (default_valid) space.candidates.push_back({v, def, true});
    std::vector<Config> others;
    for (Config& c : valid)
      if (!(default_valid && c == def)) others.push_back(std::move(c));
    admitted.push_back(v);
    rest.push_back(std::move(others));
  }
  for (std::size_t i = 0; i < admitted.size(); ++i)
    for (Config& c : rest[i]) space.candidates.push_back({admitted[i], std::move(c), false});
  return space;
}

}  // namespace kiln
