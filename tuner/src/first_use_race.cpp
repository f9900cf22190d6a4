#include "kiln/tuner/first_use_race.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_backend.hpp"
#include "kiln/buffer.hpp"
#include "kiln/stream.hpp"
#include "kiln/tuner/problem_data.hpp"
#include "kiln/tuner/search_space.hpp"
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
  return race_first_use(rt, p, device, rt.dispatcher().decide_uncached(p, device), options);
}

std::optional<Decision> race_first_use(Runtime& rt, const Problem& p, const DeviceInfo& device,
                                       const Decision& prediction, const RaceOptions& options) {
  if (!p.schema || (!p.device.is_cuda() && !options.allow_host)) return std::nullopt;
  auto skip = [&](const std::string& why) -> std::optional<Decision> {
    logger()->debug("race {} {}: not raced: {}", p.schema->name, p.key(), why);
    return std::nullopt;
  };
  const auto started = std::chrono::steady_clock::now();
  try {
    if (!prediction.variant) return skip("no variant supports it");
    if (prediction.evidence == Decision::Evidence::exact_entry) return skip("it has an exact entry");
    // The runners-up: the dispatcher's choice without the predicted variant (raced when the
    // weighed neighbours expect it within reach), and without every variant of the predicted one's
    // plugin (cuBLAS and cuBLASLt share their slow spots, which no neighbour of another shape
    // shows).  Each of these also races at its default for the problem when the neighbours'
    // config differs: a config tuned for another shape can miss this one (twelfth session, blind
    // draws: split k at a neighbour's 64 x 64 tile 44.6 us, at its default 24.4).  Every candidate
    // is a decision the dispatcher could make, so nothing kept is a kernel op() would not run.
    std::vector<Decision> racers;
    racers.push_back(prediction);
    auto add = [&](Decision d) {
      if (!d.variant) return;
      for (const Decision& r : racers)
        if (r.variant == d.variant && r.config == d.config) return;
      racers.push_back(std::move(d));
    };
    // Variant v at its default for p, as a decision like `base` (whose evidence it keeps), or an
    // empty one when that config cannot run p.
    auto default_of = [&](const Decision& base, const Variant& v, const std::string& note) {
      Decision d = base;
      d.variant = &v;
      d.config = v.default_config_for(device, p);
      if (!candidate_usable(v, d.config, p, device, nullptr)) return Decision{};
      d.workspace_bytes = v.workspace_bytes(p, d.config);
      d.config_note = note;
      if (&v != base.variant) {
        d.hit.reset();
        d.weighed.clear();
        d.estimates.clear();
      }
      return d;
    };
    auto with_default = [&](Decision d) {  // d and d at its default
      if (!d.variant) return;
      Decision alt = default_of(d, *d.variant, "its default for this problem (the race's alternative to the neighbours' [" +
                                                   d.config.to_string() + "])");
      add(std::move(d));
      add(std::move(alt));
    };
    auto without = [&](std::vector<std::string> excluded) {
      Dispatcher::LeaveOneOut loo;
      loo.excluded_variants = std::move(excluded);
      return rt.dispatcher().decide_uncached(p, device, loo);
    };
    const Variant& first = *racers.front().variant;
    with_default(racers.front());  // the prediction is there already: this adds its default
    Decision second = without({first.name()});
    if (second.variant && expected_ratio(racers.front(), second.variant->name()) <= options.reach)
      with_default(std::move(second));
    const Source& source = rt.registry().source_of(first);
    if (source.plugin != "direct") {
      std::vector<std::string> same_plugin;
      for (const Variant* v : rt.registry().variants(p.schema->name))
        if (rt.registry().source_of(*v).plugin == source.plugin) same_plugin.push_back(v->name());
      with_default(without(std::move(same_plugin)));
    }
    std::vector<const Variant*> runnable;  // every variant of the op that could run on p's device
    for (const Variant* v : rt.registry().variants(p.schema->name))
      if (v->device_kind() == p.device.kind && !(v->desc().reference && p.device.is_cuda())) runnable.push_back(v);
    if (racers.size() < 2 && runnable.size() < 2) return skip("no runner-up");

    std::vector<TensorSpec> specs;
    if (!p.schema->tensor_specs || !p.schema->tensor_specs(p, specs).ok()) return skip("no tensor specs");
    std::int64_t bytes = 0;
    for (const TensorSpec& s : specs) bytes += s.shape.bytes(s.dtype);
    if (bytes > options.max_tensor_bytes) return skip("its tensors are larger than the race's bound");

    // Inputs of its own, as dense as the caller's alignment class allows (the decisions were made
    // for that class; a pitched layout gives 16-byte rows where dense ones would not).
    ProblemDataOptions layout;
    layout.reference = false;  // only timing: every candidate is what op() may run anyway
    layout.pitched = layout_alignment(*p.schema, p, false) < p.align_bytes;
    if (layout_alignment(*p.schema, p, layout.pitched) < p.align_bytes) return skip("no layout of its alignment class");
    if (p.device.is_cuda() && detail::cuda_count() > 1) detail::cuda_set_device(p.device.ordinal);  // as op() does
    ProblemData data(*p.schema, p, p.device, /*seed=*/7, layout);
    const Problem& q = data.problem();
    OwnedStream stream(p.device);
    Buffer workspace;
    auto reserve_workspace = [&] {
      std::size_t bytes_needed = 0;
      for (const Decision& d : racers) bytes_needed = std::max(bytes_needed, d.variant->workspace_bytes(q, d.config));
      if (bytes_needed > workspace.bytes())
        workspace = Buffer::alloc(p.device, u8, {static_cast<std::int64_t>(bytes_needed)});
    };
    reserve_workspace();
    std::unique_ptr<CacheFlusher> flusher;
    if (p.device.is_cuda()) flusher = std::make_unique<CacheFlusher>(p.device);
    // Times racer i; a launch error is kept in *failed (the first one) and ends its part in the race.
    auto time_racer = [&](std::size_t i, const TimingOptions& timing, Status& failed) {
      const Decision& d = racers[i];
      return time_runs(
          p.device, stream,
          [&] {
            Status st = d.variant->launch(data.device_args(), q, d.config, workspace.data(), stream);
            if (!st.ok() && failed.ok()) failed = st;
          },
          timing, flusher.get());
    };

    // Tiny problems: a launch costs about as much as the work, and which kernel has the least
    // overhead there (a naive kernel against cuBLAS's setup) is not what neighbours of other
    // shapes predict (twelfth session, blind plan: f32 5 x 2 x 1 and 671 x 337 x 1 ran cuBLAS at
    // 4.7-5.2 us, gemm_naive 3.8-4.4); every variant at its default joins, a few ms in all.
    if (options.tiny_us > 0) {
      TimingOptions probe;
      probe.warmup = 1;
      probe.runs = 3;
      probe.min_runs = 1;
      Status st;
      const Timing t = time_racer(0, probe, st);
      if (st.ok() && t.median_us > 0 && t.median_us < options.tiny_us) {
        const std::string note = "its default: every variant raced at its default (a problem below " +
                                 us(options.tiny_us) + " on first use)";
        for (const Variant* v : runnable) add(default_of(racers.front(), *v, note));
        reserve_workspace();
      }
    }
    if (racers.size() < 2) return skip("no runner-up");
    const std::size_t n = racers.size();
    std::vector<std::vector<double>> samples(n);
    std::vector<Status> failed(n);
    TimingOptions timing;
    timing.warmup = 1;
    timing.runs = options.runs;
    timing.min_runs = 1;
    timing.max_seconds = options.max_seconds / static_cast<double>(n * static_cast<std::size_t>(std::max(1, options.rounds)));
    for (int round = 0; round < options.rounds; ++round) {
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = round % 2 ? n - 1 - k : k;  // forward, then backward: drift cancels
        if (!failed[i].ok()) continue;
        const Timing t = time_racer(i, timing, failed[i]);
        if (failed[i].ok()) samples[i].insert(samples[i].end(), t.samples_us.begin(), t.samples_us.end());
      }
    }
    stream.synchronize();
    std::vector<double> median(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      if (failed[i].ok() && !samples[i].empty()) median[i] = summarise(samples[i]).median_us;
    // The fastest runner-up replaces the prediction only when clearly faster (or the prediction
    // failed to launch): a short race under a drifting clock must not overrule the neighbours'
    // re-timed evidence on a near tie.
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (median[i] > 0 && (median[best] <= 0 || median[i] < median[best])) best = i;
    if (median[best] <= 0) return skip("no candidate ran: " + failed[0].message());
    std::size_t kept = best;
    if (best != 0 && median[0] > 0 && median[best] > (1.0 - options.margin) * median[0]) kept = 0;
    std::string note = std::string(kept ? "the runner-up " : "the prediction ") + describe(racers[kept]) + " " + us(median[kept]);
    for (std::size_t i = 0; i < n; ++i) {
      if (i == kept) continue;
      note += std::string(", against ") + (i == 0 ? "the prediction " : "the runner-up ") + describe(racers[i]) + " " +
              (median[i] > 0 ? us(median[i]) : std::string("(failed: ") + failed[i].message() + ")");
    }
    char took[64];
    std::snprintf(took, sizeof took, " (timed at first use; the race took %.0f ms)",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    note += took;
    Decision out = std::move(racers[kept]);
    out.raced = true;
    out.race_note = std::move(note);
    logger()->debug("race {} {}: {}", p.schema->name, p.key(), out.race_note);
    return out;
  } catch (const std::exception& e) {
    return skip(e.what());
  }
}

}  // namespace kiln
