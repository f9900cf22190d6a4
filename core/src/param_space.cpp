#include "kiln/param_space.hpp"

#include <algorithm>
#include <charconv>
#include <memory>

#include "checked_math.hpp"
#include "kiln/errors.hpp"
#include "tuning_db_files.hpp"  // detail::is_db_name, detail::printable

namespace kiln {

Config::Config(std::initializer_list<std::pair<std::string, int>> values) {
  // Like parse(): a name given twice is a mistake, not "the last one wins" ({{"BM", 64}, {"BM", 128}}
  // silently became BM=128).
  for (const auto& [name, value] : values) {
    if (has(name))
      throw ArgumentError("Config: parameter '" + detail::printable(name) + "' given twice; expected each name once");
    set(name, value);
  }
}

int Config::get(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  throw ArgumentError("config " + to_string() + " has no parameter '" + std::string(name) + "'");
}

int Config::get_or(std::string_view name, int fallback) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  return fallback;
}

bool Config::has(std::string_view name) const {
  for (const auto& kv : values_)
    if (kv.first == name) return true;
  return false;
}

void Config::set(const std::string& name, int value) {
  // An empty name prints as "=5", which parse() refuses: the config could not round-trip.
  if (name.empty()) throw ArgumentError("Config::set: the parameter name is empty; expected a name such as BM");
  for (auto& kv : values_)
    if (kv.first == name) {
      kv.second = value;
      return;
    }
  values_.emplace_back(name, value);
}

bool Config::operator==(const Config& o) const {
  if (values_ == o.values_) return true;  // the common case: same order
  if (values_.size() != o.values_.size()) return false;
  for (const auto& [n, v] : values_)
    if (!o.has(n) || o.get(n) != v) return false;
  return true;
}

bool Config::operator<(const Config& o) const {
  auto sorted = [](std::vector<std::pair<std::string, int>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  return sorted(values_) < sorted(o.values_);
}

std::string Config::to_string() const {
  if (values_.empty()) return "(none)";
  std::string s;
  for (const auto& [n, v] : values_) {
    if (!s.empty()) s += ' ';
    s += n + "=" + std::to_string(v);
  }
  return s;
}

Config Config::parse(std::string_view text) {
  Config c;
  std::size_t i = 0;
  auto is_sep = [](char ch) { return ch == ' ' || ch == ',' || ch == '\t'; };
  while (i < text.size()) {
    while (i < text.size() && is_sep(text[i])) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !is_sep(text[j])) ++j;
    const std::string_view item = text.substr(i, j - i);
    if (item == "(none)") {
      i = j;
      continue;
    }
    const std::size_t eq = item.find('=');
    int v = 0;
    const std::string_view num = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    // The caller's text is quoted through printable(): an escape sequence in it must not reach a
    // terminal or a log raw.
    if (eq == std::string_view::npos || eq == 0 || num.empty() || ec != std::errc() || ptr != num.data() + num.size())
      throw ArgumentError("config '" + detail::printable(std::string(text)) + "': expected NAME=INT items, got '" +
                          detail::printable(std::string(item)) + "'");
    const std::string name(item.substr(0, eq));
    if (c.has(name))
      throw ArgumentError("config '" + detail::printable(std::string(text)) + "': parameter '" + detail::printable(name) +
                          "' given twice");
    c.set(name, v);
    i = j;
  }
  return c;
}

ParamSpace& ParamSpace::param(std::string name, std::vector<int> values) {
  if (values.empty()) throw ArgumentError("ParamSpace::param '" + detail::printable(name) + "': the value list is empty");
  // The tuning database stores configs as {name: value}: a name it cannot store ("B M", "") was
  // tuned and then refused with "config parameter ... is not a parameter name".
  if (!detail::is_db_name(name, false))
    throw ArgumentError("ParamSpace::param '" + detail::printable(name) +
                        "': a parameter name must be letters, digits and '_' (the tuning database stores it)");
  for (const Param& p : params_)
    if (p.name == name) throw ArgumentError("ParamSpace::param: '" + name + "' declared twice");
  // only()'s configs name the parameters declared before it: one declared after would be missing
  // from every one of them, so nothing in the space could run.
  if (instantiated_)
    throw ArgumentError("ParamSpace::param '" + name + "': declared after only(); expected every parameter before it");
  // A repeated value made enumerate() list the same config twice (the tuner timed it twice) and
  // neighbour() "move" to the value it came from.
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j])
        throw ArgumentError("ParamSpace::param '" + name + "': value " + std::to_string(values[i]) +
                            " is listed twice; expected distinct values");
  // count() and at() index the cartesian product with a uint64: a product past it wrapped, so a
  // space of nine 256-value parameters counted 0 configs and enumerated none.
  std::size_t product = 0;
  if (!detail::mul_fits(static_cast<std::size_t>(count()), values.size(), product))
    throw ArgumentError("ParamSpace::param '" + name + "': its " + std::to_string(values.size()) +
                        " values would make the space's cartesian product (" + std::to_string(count()) +
                        " configs so far) larger than count() can hold (2^64 - 1 configs)");
  params_.push_back({std::move(name), std::move(values)});
  return *this;
}

ParamSpace& ParamSpace::constraint(std::string name, ConstraintFn holds) {
  // An empty predicate threw std::bad_function_call from the first enumerate() or violated(),
  // far from the declaration; the name is the reason explain prints when it fails.
  if (name.empty()) throw ArgumentError("ParamSpace::constraint: the name is empty; expected the reason it prints when it fails");
  if (!holds)
    throw ArgumentError("ParamSpace::constraint '" + detail::printable(name) +
                        "': the predicate is empty; expected a function of (config, device, problem)");
  constraints_.push_back({std::move(name), std::move(holds)});
  return *this;
}

ParamSpace& ParamSpace::only(std::vector<Config> instantiated) {
  // Searches enumerate this list instead of the product, so a config outside the space (a typo'd
  // name, a value missing from its list) was tuned and launched as if declared, and a repeated
  // one timed twice; a second call added a second constraint the first list never saw.
  if (instantiated_)
    throw ArgumentError("ParamSpace::only: called twice; expected one list of every instantiated config");
  if (instantiated.empty())
    throw ArgumentError("ParamSpace::only: the list is empty; expected at least one instantiated config");
  for (std::size_t i = 0; i < instantiated.size(); ++i) {
    const Config& c = instantiated[i];
    if (auto why = outside_space(c))
      throw ArgumentError("ParamSpace::only: config " + std::to_string(i) + " (" + detail::printable(c.to_string()) +
                          ") is not in the space: " + detail::printable(*why) +
                          "; expected the parameters declared before only(), each with a value from its list");
    for (std::size_t j = 0; j < i; ++j)
      if (instantiated[j] == c)
        throw ArgumentError("ParamSpace::only: config " + std::to_string(i) + " (" + detail::printable(c.to_string()) +
                            ") repeats config " + std::to_string(j) + "; expected distinct configs");
  }
  auto list = std::make_shared<std::vector<Config>>(std::move(instantiated));
  instantiated_ = list;
  return constraint("instantiated", [list](const Config& c, const DeviceInfo&, const Problem&) {
    return std::find(list->begin(), list->end(), c) != list->end();
  });
}

std::uint64_t ParamSpace::count() const {
  std::uint64_t n = 1;
  for (const Param& p : params_) n *= p.values.size();
  return n;
}

Config ParamSpace::at(std::uint64_t index) const {
  // Past the end, the index wrapped round to another config instead of failing.
  if (index >= count())
    throw ArgumentError("ParamSpace::at: index " + std::to_string(index) + " is past the end; expected 0 to " +
                        std::to_string(count() - 1) + " (count() is " + std::to_string(count()) + ")");
  Config c;
  std::vector<int> picks(params_.size());
  for (std::size_t i = params_.size(); i-- > 0;) {
    const std::uint64_t n = params_[i].values.size();
    picks[i] = params_[i].values[index % n];
    index /= n;
  }
  for (std::size_t i = 0; i < params_.size(); ++i) c.set(params_[i].name, picks[i]);
  return c;
}

std::vector<Config> ParamSpace::enumerate(const DeviceInfo& device, const Problem& problem) const {
  std::vector<Config> out;
  const std::uint64_t n = count();
  for (std::uint64_t i = 0; i < n; ++i) {
    Config c = at(i);
    if (!violated(c, device, problem)) out.push_back(std::move(c));
  }
  return out;
}

std::uint64_t ParamSpace::count_valid(const DeviceInfo& device, const Problem& problem) const {
  std::uint64_t k = 0;
  const std::uint64_t n = count();
  for (std::uint64_t i = 0; i < n; ++i)
    if (!violated(at(i), device, problem)) ++k;
  return k;
}

Config ParamSpace::sample(std::mt19937_64& rng) const {
  Config c;
  for (const Param& p : params_) {
    std::uniform_int_distribution<std::size_t> pick(0, p.values.size() - 1);
    c.set(p.name, p.values[pick(rng)]);
  }
  return c;
}

Config ParamSpace::neighbour(const Config& c, std::mt19937_64& rng) const {
  std::vector<std::size_t> movable;
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (params_[i].values.size() > 1) movable.push_back(i);
  if (movable.empty()) return c;
  const Param& p = params_[movable[std::uniform_int_distribution<std::size_t>(0, movable.size() - 1)(rng)]];
  auto it = std::find(p.values.begin(), p.values.end(), c.get_or(p.name, p.values.front()));
  std::size_t pos = it == p.values.end() ? 0 : static_cast<std::size_t>(it - p.values.begin());
  if (pos == 0)
    pos = 1;
  else if (pos + 1 == p.values.size())
    pos -= 1;
  else
    pos = std::bernoulli_distribution(0.5)(rng) ? pos + 1 : pos - 1;
  Config n = c;
  n.set(p.name, p.values[pos]);
  return n;
}

bool ParamSpace::contains(const Config& c) const {
  if (c.values().size() != params_.size()) return false;
  for (const Param& p : params_) {
    if (!c.has(p.name)) return false;
    if (std::find(p.values.begin(), p.values.end(), c.get(p.name)) == p.values.end()) return false;
  }
  return true;
}

std::optional<std::string> ParamSpace::violated(const Config& c, const DeviceInfo& device, const Problem& problem) const {
  if (auto why = outside_space(c)) return why;
  for (const Constraint& k : constraints_)
    if (!k.holds(c, device, problem)) return "constraint '" + k.name + "' fails";
  return std::nullopt;
}

std::optional<std::string> ParamSpace::outside_space(const Config& c) const {
  if (c.values().size() != params_.size()) {
    std::string names;
    for (const Param& p : params_) names += (names.empty() ? "" : ", ") + p.name;
    return "config " + c.to_string() + " does not name exactly the parameters {" + names + "}";
  }
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::string& name = params_[i].name;
    if (!c.has(name)) return "config " + c.to_string() + " has no parameter '" + name + "'";
    const int value = c.get(name);
    const auto& vs = params_[i].values;
    if (std::find(vs.begin(), vs.end(), value) == vs.end()) {
      std::string list;
      for (int v : vs) list += (list.empty() ? "" : ", ") + std::to_string(v);
      return name + ": " + std::to_string(value) + " not in {" + list + "}";
    }
  }
  return std::nullopt;
}

std::string ParamSpace::to_string() const {
  if (params_.empty()) return "(no parameters)";
  std::string s;
  for (const Param& p : params_) {
    if (!s.empty()) s += "; ";
    s += p.name + " in {";
    for (std::size_t i = 0; i < p.values.size(); ++i) s += (i ? "," : "") + std::to_string(p.values[i]);
    s += "}";
  }
  if (!constraints_.empty()) {
    s += "; constraints:";
    for (const Constraint& k : constraints_) s += " [" + k.name + "]";
  }
  return s;
}

}  // namespace kiln
