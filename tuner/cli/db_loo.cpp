// kiln db loo: leave-one-out evaluation of dispatch from evidence.  For every tuned entry of a
// device in the database, what would op() choose if that entry were not there (its neighbours,
// a far neighbour, the model, the vendor)?  It agrees when it picks the entry's own winner.
//
// The database stores winners only, not every candidate's time, so a disagreement is not a
// measured regret: the other variant may be a near tie.  What the tool gives without a GPU is
// where the evidence is thin (which ops, which corners) and a fixed score to compare dispatch
// rules and coverage plans by; `kiln bench --regret` measures the real regret on a GPU.
#include "db_loo.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include <kiln/device.hpp>
#include <kiln/dispatcher.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>
#include <kiln/runtime.hpp>
#include <kiln/tuning_db.hpp>

#include "common.hpp"
#include "json.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped
#include "json_document.hpp"
#include "table.hpp"

namespace kiln::cli {

bool device_from_key(const std::string& key, DeviceInfo& out) {
  const auto a = key.find('|');
  const auto b = a == std::string::npos ? a : key.find('|', a + 1);
  if (b == std::string::npos) return false;
  const std::string name = key.substr(0, a), arch = key.substr(a + 1, b - a - 1), count = key.substr(b + 1);
  // Whole numbers in digits that fit an int (sscanf's %d overflowed on 99999999999999999999).
  auto whole = [](const std::string& text, int& v) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
  };
  int cc = 0, sms = 0;
  const bool arch_ok = arch.compare(0, 3, "sm_") == 0 && whole(arch.substr(3), cc);
  const bool sms_ok = count.size() > 2 && count.compare(count.size() - 2, 2, "sm") == 0 &&
                      whole(count.substr(0, count.size() - 2), sms);
  // A GPU has a name, an architecture and SMs (an empty name was taken: "|sm_90|1sm"), and no key
  // the database can hold has a control character (one went to the terminal raw).
  if (name.empty() || !arch_ok || !sms_ok || cc < 10 || sms < 1) return false;
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f) return false;
  out = DeviceInfo{};
  out.device = Device::cuda(0);
  out.name = name;
  out.cc_major = cc / 10;
  out.cc_minor = cc % 10;
  out.sm_count = sms;
  return out.fingerprint() == key;
}

std::string decided_variant(const Decision& d) {
  return d.variant ? d.variant->name() : d.hit ? d.hit->entry.variant : std::string();
}

namespace {

constexpr double kRegretLimit = 1.10;  // issue 14's bar for any one problem

// The problem a stored key names, with the schema's dim names in order; false when it does not parse.
bool problem_of(const OpSchema& schema, const std::string& key, Device device, Problem& out) {
  ParsedKey k;
  if (!parse_problem_key(key, k) || k.n_dims != static_cast<int>(schema.dim_names.size())) return false;
  out = Problem{};
  out.schema = &schema;
  out.device = device;
  out.dtype = k.dtype;
  out.n_dims = k.n_dims;
  out.align_bytes = 16;
  for (int i = 0; i < k.n_dims; ++i) {
    if (k.names[i] != schema.dim_names[i]) return false;
    out.dims[i] = k.dims[i];
  }
  if (out.key() != key) return false;
  // A key the op rejects (a hand edit: k > n for topk, a mode outside its values) is no problem
  // dispatch can be asked about: decide_uncached would refuse it (Dispatcher::check_problem) and
  // end the whole evaluation, so the entry is left out like an unparsable key.
  try {
    schema.check_problem(out);
  } catch (const ArgumentError&) {
    return false;
  }
  return true;
}

// The left-out entry's time for `variant` over its fastest time (winner or alternative); 0 when
// the entry has no time for that variant.
double regret_of(const TuningEntry& e, const std::string& variant) {
  double best = e.median_us, chosen = variant == e.variant ? e.median_us : 0.0;
  for (const TunedAlternative& a : e.alternatives) {
    best = std::min(best, a.median_us);
    if (a.variant == variant) chosen = a.median_us;
  }
  return chosen > 0 && best > 0 ? chosen / best : 0.0;
}

struct Tally {
  int entries = 0, same_variant = 0, same_config = 0;
  int measured = 0, above = 0;  // entries with a regret; of them above kRegretLimit
  double log_regret = 0, max_regret = 0;
  void add_regret(double r) {
    if (!(r > 0)) return;
    ++measured;
    log_regret += std::log(r);
    max_regret = std::max(max_regret, r);
    above += r > kRegretLimit;
  }
  double geomean() const { return measured ? std::exp(log_regret / measured) : 0.0; }
  std::map<std::string, std::pair<int, int>> by_evidence;  // evidence -> (entries, same variant)
};

}  // namespace

int run_db_loo(const DbLooOptions& o) {
  auto rt = open_runtime("off", o.json);
  if (!o.op.empty()) rt->registry().op(o.op);  // UnknownOpError: "did you mean ...", exit 2

  // The device: --device-key, else this machine's first GPU with entries, else the first GPU key.
  std::set<std::string> keys;
  for (const TuningLayer& layer : rt->db().layers())
    for (const auto& [dev, ops] : layer.table) keys.insert(dev);
  std::string device_key = o.device_key;
  if (device_key.empty()) {
    for (const DeviceInfo& d : enumerate_devices())
      if (d.device.is_cuda() && keys.count(d.fingerprint())) device_key = d.fingerprint();
    for (const std::string& k : keys)
      if (device_key.empty() && k.find("|host|") == std::string::npos) device_key = k;
  }
  if (device_key.empty() || !keys.count(device_key))
    throw UsageError("kiln db loo: --device-key: " +
                     (device_key.empty() ? std::string("the database has no GPU entries")
                                         : "no entries for '" + detail::control_escaped(device_key) + "'") +
                     " (kiln db show lists the device keys)");
  DeviceInfo device;
  bool local = false;
  for (const DeviceInfo& d : enumerate_devices())
    if (d.fingerprint() == device_key) device = d, local = true;
  if (!local && !device_from_key(device_key, device))
    throw UsageError("kiln db loo: --device-key '" + detail::control_escaped(device_key) + "' is not NAME|sm_XY|Nsm");

  // Every entry of that device key, once (the user layer shadows the shipped one).
  std::map<std::string, std::map<std::string, const TuningEntry*>> entries;  // op -> key -> entry
  for (const TuningLayer& layer : rt->db().layers()) {
    auto dev = layer.table.find(device_key);
    if (dev == layer.table.end()) continue;
    for (const auto& [op, by_key] : dev->second) {
      if (!o.op.empty() && op != o.op) continue;
      for (const auto& [key, e] : by_key) entries[op].emplace(key, &e);
    }
  }

  std::map<std::string, Tally> tallies;
  Tally all;
  Json rows = Json::array();
  Table misses({"op", "problem", "winner", "chosen", "evidence", "distance", "regret"},
               {Align::left, Align::left, Align::left, Align::left, Align::left, Align::right, Align::right});
  const Dispatcher::LeaveOneOut base{"", !local};
  for (const auto& [op, by_key] : entries) {
    const OpSchema* schema = rt->registry().find_op(op);
    if (!schema) continue;
    for (const auto& [key, e] : by_key) {
      Problem p;
      if (!problem_of(*schema, key, device.device, p)) continue;
      Dispatcher::LeaveOneOut loo = base;
      loo.left_out = key;
      const Decision d = rt->dispatcher().decide_uncached(p, device, loo);
      const std::string chosen = decided_variant(d);
      const bool same_variant = chosen == e->variant;
      const bool same_config = same_variant && d.config == e->config;
      const std::string ev = evidence_name(d.evidence);
      const double regret = chosen.empty() ? 0.0 : regret_of(*e, chosen);
      for (Tally* t : {&tallies[op], &all}) {
        t->add_regret(regret);
        ++t->entries;
        t->same_variant += same_variant;
        t->same_config += same_config;
        auto& [n, same] = t->by_evidence[ev];
        ++n;
        same += same_variant;
      }
      char dist[32] = "";
      if (d.hit) std::snprintf(dist, sizeof dist, "%.2f", d.distance);
      char reg[32] = "";
      if (regret > 0) std::snprintf(reg, sizeof reg, "%.2f", regret);
      if (!same_variant || (o.verbose && regret > kRegretLimit))
        misses.add({op, key, e->variant, chosen.empty() ? "(none)" : chosen, ev, dist, reg});
      if (o.json)
        rows.push(Json::object()
                      .set("op", op)
                      .set("problem", key)
                      .set("winner", e->variant)
                      .set("chosen", chosen)
                      .set("evidence", ev)
                      .set("distance", d.hit ? d.distance : 0.0)
                      .set("from", d.hit ? d.hit->problem_key : std::string())
                      .set("same_variant", same_variant)
                      .set("same_config", same_config)
                      .set("regret", regret > 0 ? Json(regret) : Json()));
    }
  }
  if (all.entries == 0) throw UsageError("kiln db loo: no entries to evaluate for " + device_key +
                                         (o.op.empty() ? std::string() : " and op '" + o.op + "'"));

  auto pct = [](int part, int whole) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", whole ? 100.0 * part / whole : 0.0);
    return std::string(buf);
  };
  if (o.json) {
    // One tally's fields, for every op and for all of them.
    auto tally_fields = [](Json& j, const Tally& t) -> Json& {
      return j.set("entries", t.entries)
          .set("same_variant", t.same_variant)
          .set("same_config", t.same_config)
          .set("regret_measured", t.measured)
          .set("regret_geomean", t.measured ? Json(t.geomean()) : Json())
          .set("regret_max", t.measured ? Json(t.max_regret) : Json())
          .set("regret_above_1_10", t.above);
    };
    Json ops = Json::object();
    for (const auto& [op, t] : tallies) {
      Json one = Json::object();
      ops.set(op, std::move(tally_fields(one, t)));
    }
    Json doc = json_document();
    doc.set("device_key", device_key).set("entries_trusted", !local);
    tally_fields(doc, all).set("ops", std::move(ops)).set("problems", std::move(rows));
    std::cout << doc.dump() << "\n";
    return kExitOk;
  }
  std::cout << "leave-one-out over " << all.entries << " entries of " << device_key
            << (local ? "" : " (not this machine: every entry counts as usable)") << "\n";
  auto fixed = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  auto row = [&](const std::string& name, const Tally& x) {
    return std::vector<std::string>{name,
                                    std::to_string(x.entries),
                                    pct(x.same_variant, x.entries),
                                    pct(x.same_config, x.entries),
                                    std::to_string(x.measured),
                                    x.measured ? fixed(x.geomean()) : "-",
                                    x.measured ? fixed(x.max_regret) : "-",
                                    std::to_string(x.above)};
  };
  Table t({"op", "entries", "same variant", "same config", "with times", "geomean regret", "max", "> 1.10"},
          {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right});
  for (const auto& [op, x] : tallies) t.add(row(op, x));
  t.add(row("all", all));
  t.print(std::cout, "  ");
  Table ev({"evidence", "entries", "same variant"}, {Align::left, Align::right, Align::right});
  for (const auto& [name, x] : all.by_evidence) ev.add({name, std::to_string(x.first), pct(x.second, x.first)});
  std::cout << "by the evidence that decided:\n";
  ev.print(std::cout, "  ");
  if (o.verbose && !misses.empty()) {
    std::cout << "another variant than the winner, or a regret above 1.10:\n";
    misses.print(std::cout, "  ");
  }
  std::cout << "(regret: the left-out entry's time for the chosen variant, at that variant's best config, over its "
               "fastest; only entries tuned with alternatives have one. kiln bench --regret measures on the GPU)\n";
  return kExitOk;
}

}  // namespace kiln::cli
