// ParamSpace: a variant's tuning parameters as data — ordered named integer parameters, each with
// a list of values, plus named constraints over (config, device, problem).  Config: one value per
// parameter, a comparable, printable value type ("BM=128 BN=128 BK=16").
//
//   kiln::ParamSpace s;
//   s.param("block", {128, 256, 512}).param("items", {1, 2, 4})
//    .constraint("threads <= 1024", [](const kiln::Config& c, const kiln::DeviceInfo&,
//                                      const kiln::Problem&) { return c.get("block") <= 1024; });
//   for (const kiln::Config& c : s.enumerate(device, problem))         // valid configs only
//     std::cout << c.to_string() << "\n";                                // "block=128 items=1", ...
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/problem.hpp"

namespace kiln {

class Config {
 public:
  Config() = default;
  // Throws ArgumentError for a name given twice.
  Config(std::initializer_list<std::pair<std::string, int>> values);

  // Throws ArgumentError naming the parameter when it is absent.
  int get(std::string_view name) const;
  int get_or(std::string_view name, int fallback) const;
  bool has(std::string_view name) const;
  void set(const std::string& name, int value);       // adds or replaces, keeping order; ArgumentError for ""
  const std::vector<std::pair<std::string, int>>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  std::string to_string() const;                      // "BM=128 BN=128"; "(none)" when empty
  // Parses to_string()'s form ("BM=128 BN=128" or "BM=128,BN=128"); throws ArgumentError.
  static Config parse(std::string_view text);
  // Configs are sets of named values: the order they are listed in (a hand-edited database
  // may list {unroll, block} for {block, unroll}) changes how they print, not what they are.
  bool operator==(const Config& o) const;
  bool operator!=(const Config& o) const { return !(*this == o); }
  bool operator<(const Config& o) const;   // by name, then value

 private:
  std::vector<std::pair<std::string, int>> values_;
};

using ConstraintFn = std::function<bool(const Config&, const DeviceInfo&, const Problem&)>;

class ParamSpace {
 public:
  struct Param {
    std::string name;
    std::vector<int> values;
  };
  struct Constraint {
    std::string name;  // printed as the reason when it fails
    ConstraintFn holds;
  };

  // Throws ArgumentError for a repeated name, an empty value list, a value listed twice, or a
  // call after only().
  ParamSpace& param(std::string name, std::vector<int> values);
  // Throws ArgumentError for an empty name or an empty predicate.
  ParamSpace& constraint(std::string name, ConstraintFn holds);
  // Restricts the space to an explicit list of configs (for kernels instantiated from a
  // compile-time list): adds a constraint named "instantiated".  Call it once, after every
  // param(); throws ArgumentError for an empty list, a config not in the space (other names, or a
  // value not in its list) and a config listed twice.
  ParamSpace& only(std::vector<Config> instantiated);
  // The list given to only(), nullptr when none: searches enumerate it instead of the cartesian
  // product (thousands of configs for a dozen instantiated ones).
  const std::vector<Config>* instantiated() const { return instantiated_.get(); }

  const std::vector<Param>& params() const { return params_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  bool empty() const { return params_.empty(); }
  // Size of the cartesian product of the value lists (1 for an empty space).
  std::uint64_t count() const;
  // The i-th config of the cartesian product, first parameter varying slowest; ArgumentError for
  // an index >= count().
  Config at(std::uint64_t index) const;
  // Every config of the product that satisfies all constraints.
  std::vector<Config> enumerate(const DeviceInfo& device, const Problem& problem) const;
  std::uint64_t count_valid(const DeviceInfo& device, const Problem& problem) const;
  // Uniform sample of the product (may violate constraints; check with violated()).
  Config sample(std::mt19937_64& rng) const;
  // A config differing from `c` in one parameter, moved to an adjacent value in its list.
  Config neighbour(const Config& c, std::mt19937_64& rng) const;
  // Whether `c` names exactly these parameters (in any order) with values from their lists.
  bool contains(const Config& c) const;
  // The first failure as a reason ("BM: 96 not in {64, 128}", "constraint smem <= limit"), or
  // nothing when `c` belongs to the space and satisfies every constraint.
  std::optional<std::string> violated(const Config& c, const DeviceInfo& device, const Problem& problem) const;
  std::string to_string() const;  // "BM in {64,128}; BN in {64,128}; constraints: ..."

 private:
  // Why `c` is not a config of the product (other names, a value not in its list), if it is not.
  std::optional<std::string> outside_space(const Config& c) const;

  std::vector<Param> params_;
  std::vector<Constraint> constraints_;
  std::shared_ptr<const std::vector<Config>> instantiated_;
};

}  // namespace kiln
