#include "kiln/tuner/oracle.hpp"

#include <algorithm>

#include "kiln/tuner/search_space.hpp"

namespace kiln {

double estimated_reference_seconds(const Problem& problem) {
  if (!problem.schema || !problem.schema->work) return 0.0;
  const double work = problem.schema->work(problem);
  return problem.schema->work_unit == WorkUnit::flop ? work / 1e9 : work / 2e9;
}

std::optional<Candidate> choose_oracle(const Registry& registry, const Problem& problem, const DeviceInfo& device,
                                       const EvaluatorOptions& options) {
  if (!options.use_oracle || !problem.schema || !problem.schema->reference_element) return std::nullopt;
  if (!device.device.is_cuda()) return std::nullopt;
  if (estimated_reference_seconds(problem) < options.oracle_above_seconds) return std::nullopt;
  std::vector<const Variant*> vendors;
  for (const Variant* v : registry.variants(problem.schema->name))
    if (v->desc().vendor && !v->desc().reference) vendors.push_back(v);
  std::stable_sort(vendors.begin(), vendors.end(),
                   [](const Variant* a, const Variant* b) { return a->priority() > b->priority(); });
  for (const Variant* v : vendors) {
    const Config config = v->default_config_for(device, problem);
    if (candidate_usable(*v, config, problem, device, nullptr)) return Candidate{v, config, true};
  }
  return std::nullopt;
}

}  // namespace kiln
