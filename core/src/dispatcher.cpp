#include "kiln/dispatcher.hpp"

#include <algorithm>
#include <mutex>

#include "kiln/log.hpp"

namespace kiln {

const char* decision_source_name(Decision::From from) {
  switch (from) {
    case Decision::From::database: return "tuning database";
    case Decision::From::defaults: return "variant defaults";
    case Decision::From::tuned_now: return "tuned on first use (KILN_TUNE=lazy)";
  }
  return "?";
}

std::string Decision::explain() const {
  std::string s;
  s += "variant: " + (variant ? variant->name() : std::string("(none)")) + "\n";
  s += "config:  " + config.to_string() + "\n";
  s += "source:  " + std::string(decision_source_name(from)) + "\n";
  if (hit) {
    s += "  file:    " + hit->layer_path + "\n";
    s += "  device:  " + hit->device_key + " (" + fallback_level_name(hit->level) + ")\n";
    s += "  problem: " + hit->problem_key + (hit->exact_problem ? " (exact key)" : " (nearest entry of the same bucket)") + "\n";
    char buf[128];
    std::snprintf(buf, sizeof buf, "  tuned:   median %.2f us (MAD %.2f us, %d samples)", hit->entry.median_us,
                  hit->entry.mad_us, hit->entry.samples);
    s += buf;
    if (!hit->entry.tuned_at.empty()) s += " at " + hit->entry.tuned_at;
    s += "\n";
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
  Support s = v.supports(p, device, config);
  if (!s.ok) {
    if (why) *why = s.reason.empty() ? std::string("not supported") : s.reason;
    return false;
  }
  return true;
}

}  // namespace

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

Decision Dispatcher::decide_uncached(const Problem& p, const DeviceInfo& device) const {
  Decision d;
  const std::string op = p.schema ? p.schema->name : std::string();
  // 1. The tuning database.  Rejected entries are remembered for `kiln explain`.
  auto accept = [&](const TuningEntry& e) {
    std::string why;
    if (entry_usable(e, p, device, &why)) return true;
    d.rejected.emplace_back("database entry " + e.variant + " [" + e.config.to_string() + "]", why);
    return false;
  };
  auto bucket_of_key = [&](const Problem& q) { return p.schema->bucket_of(q); };
  if (p.schema) {
    if (auto hit = db_->lookup(device, op, p, p.schema->bucket_of(p), accept, bucket_of_key)) {
      d.variant = registry_->find_variant(hit->entry.variant);
      d.config = hit->entry.config;
      d.from = Decision::From::database;
      d.hit = std::move(hit);
      d.workspace_bytes = d.variant->workspace_bytes(p, d.config);
      return d;
    }
  }
  // 2. Defaults, in priority order: the first variant whose default config supports p.
  for (const Variant* v : registry_->variants(op)) {
    const Config config = v->default_config_for(device, p);
    std::string why;
    if (usable(*v, config, p, device, &why)) {
      d.variant = v;
      d.config = config;
      d.from = Decision::From::defaults;
      d.workspace_bytes = v->workspace_bytes(p, config);
      return d;
    }
    d.rejected.emplace_back(v->name(), why);
  }
  return d;  // d.variant == nullptr: nothing supports p
}

const Decision& Dispatcher::decide(const Problem& p, const DeviceInfo& device) {
  {
    std::shared_lock lock(mutex_);
    auto it = memo_.find(p);
    if (it != memo_.end()) return *it->second;
  }
  // Misses are serialised: the database is read here and, in lazy mode, written by the tuner.
  std::lock_guard<std::mutex> miss_lock(miss_mutex_);
  {
    std::shared_lock lock(mutex_);  // another thread may have decided p meanwhile
    auto it = memo_.find(p);
    if (it != memo_.end()) return *it->second;
  }
  if (observer_) observer_(p);
  auto d = std::make_unique<Decision>(decide_uncached(p, device));
  if (d->from != Decision::From::database && miss_handler_) {
    if (auto tuned = miss_handler_(p, device)) *d = std::move(*tuned);
  }
  if (!d->variant) {
    std::string msg = "no variant of '" + (p.schema ? p.schema->name : std::string("?")) + "' supports " + p.key() +
                      " on " + device.device.to_string() + ":";
    if (d->rejected.empty()) msg += " no variants are registered for this op";
    for (const auto& [what, why] : d->rejected) msg += "\n  " + what + ": " + why;
    throw NoVariantError(msg);
  }
  logger()->debug("dispatch {} {} -> {} [{}] ({})", p.schema ? p.schema->name : "?", p.key(), d->variant->name(),
                  d->config.to_string(), decision_source_name(d->from));
  std::unique_lock lock(mutex_);
  auto [it, inserted] = memo_.emplace(p, std::move(d));
  return *it->second;
}

void Dispatcher::clear_memo() {
  std::unique_lock lock(mutex_);
  memo_.clear();
}

std::size_t Dispatcher::memo_size() const {
  std::shared_lock lock(mutex_);
  return memo_.size();
}

}  // namespace kiln
