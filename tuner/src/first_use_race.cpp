#include "kiln/tuner/first_use_race.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_backend.hpp"
#include "kiln/buffer.hpp"
#include "kiln/stream.hpp"
#include "kiln/tuner/problem_data.hpp"
#include "kiln/tuner/timer.hpp"
#include "logger.hpp"

namespace kiln {
namespace {

// The weighed neighbours' expectation of `runner_up` against the prediction (their expected
// slowdowns over the best), or 0 when the decision carries none.
double expected_ratio(const Decision& predicted, const std::string& runner_up) {
  double first = 0, second = 0;
  for (const auto& [variant, ratio] : predicted.weighed) {
    if (predicted.variant && variant == predicted.variant->name()) first = ratio;
    if (variant == runner_up) second = ratio;
  }
  return first > 0 && second > 0 ? second / first : 0.0;
}

std::string describe(const Decision& d) {
  return d.variant->name() + (d.config.empty() ? std::string() : " [" + d.config.to_string() + "]");
}

std::string us(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", t);
  return buf;
}

}  // namespace

std::optional<Decision> race_first_use(Runtime& rt, const Problem& p, const DeviceInfo& device,
                                       const RaceOptions& options) {
  if (!p.schema || (!p.device.is_cuda() && !options.allow_host)) return std::nullopt;
  auto skip = [&](const std::string& why) -> std::optional<Decision> {
    logger()->debug("race {} {}: not raced: {}", p.schema->name, p.key(), why);
    return std::nullopt;
  };
  try {
    Decision predicted = rt.dispatcher().decide_uncached(p, device);
    if (!predicted.variant) return skip("no variant supports it");
    if (predicted.evidence == Decision::Evidence::exact_entry) return skip("it has an exact entry");
    Dispatcher::LeaveOneOut without;
    without.excluded_variant = predicted.variant->name();
    Decision second = rt.dispatcher().decide_uncached(p, device, without);
    if (!second.variant || second.variant == predicted.variant) return skip("no runner-up");
    const double expected = expected_ratio(predicted, second.variant->name());
    if (expected > options.reach) return skip("the neighbours expect the runner-up far behind");

    std::vector<TensorSpec> specs;
    if (!p.schema->tensor_specs || !p.schema->tensor_specs(p, specs).ok()) return skip("no tensor specs");
    std::int64_t bytes = 0;
    for (const TensorSpec& s : specs) bytes += s.shape.bytes(s.dtype);
    if (bytes > options.max_tensor_bytes) return skip("its tensors are larger than the race's bound");

    // Inputs of its own, as dense as the caller's alignment class allows (both decisions were
    // made for that class; a pitched layout gives 16-byte rows where dense ones would not).
    ProblemDataOptions layout;
    layout.reference = false;  // only timing: both candidates are what op() may run anyway
    layout.pitched = layout_alignment(*p.schema, p, false) < p.align_bytes;
    if (layout_alignment(*p.schema, p, layout.pitched) < p.align_bytes) return skip("no layout of its alignment class");
    if (p.device.is_cuda() && detail::cuda_count() > 1) detail::cuda_set_device(p.device.ordinal);  // as op() does
    ProblemData data(*p.schema, p, p.device, /*seed=*/7, layout);
    const Problem& q = data.problem();
    OwnedStream stream(p.device);
    const std::size_t ws_bytes = std::max(predicted.variant->workspace_bytes(q, predicted.config),
                                          second.variant->workspace_bytes(q, second.config));
    Buffer workspace;
    if (ws_bytes) workspace = Buffer::alloc(p.device, u8, {static_cast<std::int64_t>(ws_bytes)});
    std::unique_ptr<CacheFlusher> flusher;
    if (p.device.is_cuda()) flusher = std::make_unique<CacheFlusher>(p.device);

    const Decision* racers[2] = {&predicted, &second};
    std::vector<double> samples[2];
    Status failed[2];
    TimingOptions timing;
    timing.warmup = 1;
    timing.runs = options.runs;
    timing.min_runs = 1;
    timing.max_seconds = options.max_seconds / (2.0 * std::max(1, options.rounds));
    for (int round = 0; round < options.rounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        const int i = round % 2 ? 1 - k : k;  // prediction first, then the runner-up first
        if (!failed[i].ok()) continue;
        const Decision& d = *racers[i];
        const Timing t = time_runs(
            p.device, stream,
            [&] {
              Status st = d.variant->launch(data.device_args(), q, d.config, workspace.data(), stream);
              if (!st.ok() && failed[i].ok()) failed[i] = st;
            },
            timing, flusher.get());
        if (failed[i].ok()) samples[i].insert(samples[i].end(), t.samples_us.begin(), t.samples_us.end());
      }
    }
    stream.synchronize();
    if (!failed[0].ok() && !failed[1].ok()) return skip("neither candidate ran: " + failed[0].message());
    const double t0 = failed[0].ok() && !samples[0].empty() ? summarise(samples[0]).median_us : 0.0;
    const double t1 = failed[1].ok() && !samples[1].empty() ? summarise(samples[1]).median_us : 0.0;
    if (t0 <= 0 && t1 <= 0) return skip("nothing was timed");
    const bool second_wins = t1 > 0 && (t0 <= 0 || t1 < (1.0 - options.margin) * t0);
    Decision kept = second_wins ? std::move(second) : std::move(predicted);
    const Decision& other = second_wins ? *racers[0] : *racers[1];  // the one not moved into kept
    kept.raced = true;
    const double kept_us = second_wins ? t1 : t0, other_us = second_wins ? t0 : t1;
    kept.race_note = std::string(second_wins ? "the runner-up " : "the prediction ") + describe(kept) + " " +
                     us(kept_us) + ", against " + (second_wins ? "the prediction " : "the runner-up ") +
                     (other.variant ? other.variant->name() : std::string("?")) + " " +
                     (other_us > 0 ? us(other_us) : std::string("(failed)")) + " (timed at first use)";
    logger()->debug("race {} {}: {}", p.schema->name, p.key(), kept.race_note);
    return kept;
  } catch (const std::exception& e) {
    return skip(e.what());
  }
}

}  // namespace kiln
