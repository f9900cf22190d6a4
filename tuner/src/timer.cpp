#include "kiln/tuner/timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cuda_backend.hpp"

namespace kiln {

Timing summarise(std::vector<double> samples_us) {
  Timing t;
  t.samples = static_cast<int>(samples_us.size());
  t.samples_us = samples_us;
  if (samples_us.empty()) return t;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  t.median_us = median(samples_us);
  for (double& s : samples_us) s = std::fabs(s - t.median_us);
  t.mad_us = median(samples_us);
  return t;
}

CacheFlusher::CacheFlusher(Device device) : device_(device) {
  if (device.is_cuda()) {
    const std::size_t l2 = device_info(device).l2_bytes;
    scratch_ = Buffer::alloc(device, u8, {static_cast<std::int64_t>(std::max<std::size_t>(2 * l2, 1 << 20))});
  }
}

void CacheFlusher::flush(Stream stream) {
  if (device_.is_cuda()) detail::cuda_memset_async(scratch_.data(), 0, scratch_.bytes(), stream.handle());
}

namespace {

// One CUDA event pair per timed run, recorded around the run only (the flush stays outside).
struct EventPair {
  void* start = detail::cuda_event_create();
  void* stop = detail::cuda_event_create();
  ~EventPair() {
    detail::cuda_event_destroy(start);
    detail::cuda_event_destroy(stop);
  }
};

}  // namespace

Timing time_runs(Device device, Stream stream, const std::function<void()>& run, const TimingOptions& options,
                 CacheFlusher* flusher) {
  std::vector<double> samples;
  if (device.is_host()) {
    for (int i = 0; i < options.warmup; ++i) run();
    for (int i = 0; i < options.runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      const auto t1 = std::chrono::steady_clock::now();
      samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (static_cast<int>(samples.size()) >= options.min_runs && summarise(samples).median_us > options.give_up_above_us) {
        Timing t = summarise(samples);
        t.gave_up = true;
        return t;
      }
    }
    return summarise(samples);
  }
  for (int i = 0; i < options.warmup; ++i) run();
  stream.synchronize();
  // Time in batches of a few runs so an early give-up does not wait for all of them.
  const int batch = std::max(1, std::min(options.min_runs, options.runs));
  int done = 0;
  while (done < options.runs) {
    const int n = std::min(batch, options.runs - done);
    std::vector<EventPair> events(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      if (!options.warm && flusher) flusher->flush(stream);
      detail::cuda_event_record(events[i].start, stream.handle());
      run();
      detail::cuda_event_record(events[i].stop, stream.handle());
    }
    for (int i = 0; i < n; ++i) samples.push_back(1000.0 * detail::cuda_event_elapsed_ms(events[i].start, events[i].stop));
    done += n;
    if (done >= options.min_runs && done < options.runs && summarise(samples).median_us > options.give_up_above_us) {
      Timing t = summarise(samples);
      t.gave_up = true;
      return t;
    }
  }
  return summarise(samples);
}

}  // namespace kiln
