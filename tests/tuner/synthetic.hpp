// Test-only pieces for the tuner: host variants that do nothing but carry a parameter space, an
// op schema for them, and an evaluator whose "time" is a known cost function of the candidate
// (plus optional seeded noise), so strategies and tie-breaking are testable without a GPU.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>

#include <kiln/kiln.hpp>
#include <kiln/tuner/evaluator.hpp>

namespace kiln_test {

class FakeVariant final : public kiln::Variant {
 public:
  FakeVariant(std::string name, int priority, kiln::ParamSpace space, kiln::Config def)
      : Variant({std::move(name), "synth", kiln::DeviceKind::host, {kiln::f32}, priority, "synthetic"}, std::move(space)),
        default_(std::move(def)) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return default_; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config& c) const override {
    // A supports() rejection to exercise its reasons: odd "bad" values are declined.
    if (c.get_or("bad", 0) % 2 == 1) return kiln::Support::no("odd 'bad' values are not supported");
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*, kiln::Stream) const override {
    return kiln::Status();
  }

 private:
  kiln::Config default_;
};

inline std::shared_ptr<kiln::OpSchema> synth_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "synth";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->make_problem = [](const kiln::Args& a, kiln::Problem& p) {
    p.dtype = kiln::f32;
    p.n_dims = 1;
    p.dims[0] = a.tensor(0).numel();
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = [](const kiln::Args&, const kiln::Problem&) { return kiln::Status(); };
  s->work = [](const kiln::Problem& p) { return 8.0 * static_cast<double>(p.dims[0]); };
  return s;
}

// A deterministic "timer": each timed run of candidate c takes cost(c) * (1 + noise * g) us, g a
// seeded normal draw.  Candidates named in `fail` fail validation, those in `fault` fault, and
// the one named `lose_device` faults with the device lost.  `clock` (seconds) advances by
// `seconds_per_eval` per check, for budget tests.
class SyntheticEvaluator final : public kiln::Evaluator {
 public:
  using CostFn = std::function<double(const kiln::Candidate&)>;
  explicit SyntheticEvaluator(CostFn cost, double noise = 0.0, std::uint64_t seed = 1)
      : cost_(std::move(cost)), noise_(noise), rng_(seed) {}

  std::set<std::string> fail, fault;
  std::string lose_device;
  int checks = 0, timings = 0;
  double clock = 0.0, seconds_per_eval = 0.0;

  kiln::CandidateResult check(const kiln::Candidate& c) override {
    ++checks;
    clock += seconds_per_eval;
    kiln::CandidateResult r;
    r.candidate = c;
    r.tolerance = 1e-5;
    const std::string s = c.to_string();
    if (fail.count(s)) {
      r.outcome = kiln::Outcome::failed;
      r.error = 1.0;
      r.reason = "wrong result (synthetic)";
    } else if (fault.count(s) || s == lose_device) {
      r.outcome = kiln::Outcome::fault;
      r.reason = "illegal address (synthetic)";
      r.device_lost = s == lose_device;
    }
    return r;
  }

  kiln::CandidateResult time(const kiln::Candidate& c, const kiln::TimingOptions& o) override {
    ++timings;
    kiln::CandidateResult r;
    r.candidate = c;
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<double> samples;
    for (int i = 0; i < o.runs; ++i) {
      samples.push_back(cost_(c) * (1.0 + noise_ * g(rng_)));
      if (static_cast<int>(samples.size()) >= o.min_runs && i + 1 < o.runs &&
          kiln::summarise(samples).median_us > o.give_up_above_us) {
        r.timing = kiln::summarise(samples);
        r.timing.gave_up = true;
        return r;
      }
    }
    r.timing = kiln::summarise(samples);
    return r;
  }

 private:
  CostFn cost_;
  double noise_;
  std::mt19937_64 rng_;
};

}  // namespace kiln_test
