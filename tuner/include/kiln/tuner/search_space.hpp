// SearchSpace: the union of every variant of an op x its parameter space, for one problem on one
// device, reduced to the candidates that may run: right device kind and dtype, constraints
// satisfied, supports() true.  Everything excluded is kept with its reason (grouped per variant
// and reason, so a space restricted by ParamSpace::only() does not list thousands of configs).
//
//   kiln::SearchSpace s = kiln::build_search_space(rt.registry(), problem, device_info(problem.device));
//   std::size_t n = s.candidates.size();  // each variant's default config first, priority order
//   for (const kiln::Rejection& r : s.rejected) std::cout << r.to_string() << "\n";
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/registry.hpp"
#include "kiln/tuner/candidate.hpp"

namespace kiln {

struct SpaceOptions {
  // Only these variants (empty: all of the op's variants).
  std::vector<std::string> variants;
  // At most this many configs per variant (0: all): a deterministic sample that always holds
  // the default config.  `kiln verify --max-configs` uses it.
  std::size_t max_configs_per_variant = 0;
  std::uint64_t seed = 1;
  // A parameter product larger than this is sampled (this many draws) instead of enumerated.
  std::uint64_t max_product = std::uint64_t{1} << 20;
};

// Configs excluded for one reason: `example` is one of them.
struct Rejection {
  enum class Kind {
    variant,     // the whole variant: other device kind, dtype, or the host reference on a GPU
    constraint,  // the config violates the parameter space (not in it, or a named constraint)
    unsupported  // supports() declined the problem with this config
  };
  Candidate example;
  Kind kind = Kind::unsupported;
  std::string reason;
  std::size_t configs = 0;
  std::string to_string() const;  // "gemm_tiled [tile=8] (and 3 more configs): reason"
};

struct SearchSpace {
  // Order: each variant's default config, variants in priority order; then every other config,
  // variant by variant in priority order, in ParamSpace enumeration order.
  std::vector<Candidate> candidates;
  std::vector<Rejection> rejected;  // one per (variant, reason)
  std::size_t variants_considered = 0;

  std::optional<std::size_t> find(const Variant* v, const Config& c) const;
};

// Throws UnknownOpError when problem.schema is null.
SearchSpace build_search_space(const Registry& registry, const Problem& problem, const DeviceInfo& device,
                               const SpaceOptions& options = {});

// Whether `v` may run `problem` on `device` with `config`: the dispatcher's checks (device kind,
// dtype, the space's constraints, supports()).  Sets `why` when not.
bool candidate_usable(const Variant& v, const Config& config, const Problem& problem, const DeviceInfo& device,
                      std::string* why);

}  // namespace kiln
