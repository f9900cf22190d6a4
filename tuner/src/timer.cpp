#include "kiln/tuner/timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

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

// The early give-up test needs a median; checking it after every run would re-sort all samples
// each time (quadratic: --runs 100000 took minutes).  It is checked at min_runs and then each
// time the sample count has grown by an eighth, so the total cost is O(n log n) and a candidate
// that cannot win runs at most an eighth more than it had to.
//
// Racing (GPU timings): a candidate whose first timed run is hopeless (hopeless_first_run) is
// given up after that run, not after min_runs: on an exhaustive search most candidates are such,
// and each of them costs one timed run instead of min_runs.
class GiveUpCheck {
 public:
  explicit GiveUpCheck(const TimingOptions& o) : limit_(o.give_up_above_us), next_(std::max(1, o.min_runs)) {}
  bool active() const { return limit_ < std::numeric_limits<double>::infinity(); }
  bool due(std::size_t samples) const { return active() && samples >= next_; }
  bool give_up(const std::vector<double>& samples) {
    next_ = samples.size() + std::max<std::size_t>(1, samples.size() / 8);
    return median_of(samples) > limit_;
  }
  // After the first timed run: hopeless already?
  bool gross(double first_us) const { return active() && hopeless_first_run(first_us, limit_); }

 private:
  static double median_of(std::vector<double> v) {
    const std::size_t n = v.size(), h = n / 2;
    std::nth_element(v.begin(), v.begin() + h, v.end());
    if (n % 2) return v[h];
    const double upper = v[h];
    return 0.5 * (*std::max_element(v.begin(), v.begin() + h) + upper);
  }
  double limit_;
  std::size_t next_;
};

using Clock = std::chrono::steady_clock;

struct Deadline {
  explicit Deadline(double seconds) : on(seconds > 0.0), at(Clock::now()) {
    if (on) at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  bool passed() const { return on && Clock::now() >= at; }
  bool on;
  Clock::time_point at;
};

}  // namespace

bool hopeless_first_run(double first_us, double give_up_above_us) {
  constexpr double kFactor = 3.0, kMarginUs = 20.0;
  return first_us > kFactor * give_up_above_us && first_us > give_up_above_us + kMarginUs;
}

Timing time_runs(Device device, Stream stream, const std::function<void()>& run, const TimingOptions& options,
                 CacheFlusher* flusher) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(0, std::min(options.runs, 1 << 20))));
  const Deadline deadline(options.max_seconds);
  // Below this many samples the time cap does not stop timing (a median needs a few).
  const std::size_t floor_runs = static_cast<std::size_t>(std::max(1, std::min(options.min_runs, options.runs)));
  GiveUpCheck check(options);
  if (device.is_host()) {
    for (int i = 0; i < options.warmup && !deadline.passed(); ++i) run();
    for (int i = 0; i < options.runs; ++i) {
      const auto t0 = Clock::now();
      run();
      const auto t1 = Clock::now();
      samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (check.due(samples.size()) && check.give_up(samples)) {
        Timing t = summarise(samples);
        t.gave_up = true;
        return t;
      }
      if (samples.size() >= floor_runs && deadline.passed()) break;
    }
    return summarise(samples);
  }
  for (int i = 0; i < options.warmup && !deadline.passed(); ++i) run();
  stream.synchronize();
  // Time in batches of a few runs so an early give-up does not wait for all of them; the first
  // batch is one run when a limit is set (the gross check above).
  const int batch = std::max(1, std::min(options.min_runs, options.runs));
  int done = 0;
  while (done < options.runs) {
    const int n = std::min(done == 0 && check.active() ? 1 : batch, options.runs - done);
    std::vector<EventPair> events(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      if (!options.warm && flusher) flusher->flush(stream);
      detail::cuda_event_record(events[i].start, stream.handle());
      run();
      detail::cuda_event_record(events[i].stop, stream.handle());
    }
    for (int i = 0; i < n; ++i) samples.push_back(1000.0 * detail::cuda_event_elapsed_ms(events[i].start, events[i].stop));
    done += n;
    if (done < options.runs &&
        ((samples.size() == 1 && check.gross(samples[0])) || (check.due(samples.size()) && check.give_up(samples)))) {
      Timing t = summarise(samples);
      t.gave_up = true;
      return t;
    }
    if (samples.size() >= floor_runs && deadline.passed()) break;
  }
  return summarise(samples);
}

}  // namespace kiln
