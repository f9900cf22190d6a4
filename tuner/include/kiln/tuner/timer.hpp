// Timing: CUDA events on the problem's stream for CUDA work (a host clock for host work), warm-up
// runs, then repeated timed runs summarised by median and median absolute deviation.  Between
// runs the L2 cache is flushed (a memset over a buffer larger than L2) unless `warm` is set.
//
//   kiln::TimingOptions o;  o.warmup = 3;  o.runs = 20;
//   kiln::Timing t = kiln::time_runs(kiln::Device::cuda(0), stream, [&] { rt.op("add")({a, b, c}, stream); }, o);
//   std::cout << t.median_us << " us +- " << t.mad_us << "\n";
#pragma once
#include <functional>
#include <limits>
#include <vector>

#include "kiln/buffer.hpp"
#include "kiln/stream.hpp"

namespace kiln {

struct TimingOptions {
  int warmup = 3;
  int runs = 20;
  bool warm = false;  // true: do not flush L2 between runs
  // Stop early when, after `min_runs`, the median is already above this (the candidate cannot
  // win); infinity disables.
  double give_up_above_us = std::numeric_limits<double>::infinity();
  int min_runs = 5;
  // Wall-clock cap on the whole call (warm-up included), 0 for none: once it has passed, timing
  // stops after min(min_runs, runs) samples (or at once during warm-up).
  double max_seconds = 0.0;
};

struct Timing {
  double median_us = 0.0;
  double mad_us = 0.0;   // median absolute deviation
  int samples = 0;
  bool gave_up = false;  // stopped early by give_up_above_us
  std::vector<double> samples_us;
};

// Racing: whether a candidate whose first timed run took `first_us` is hopeless against
// `give_up_above_us` (more than 3x it and 20 us past it, so noise on a microsecond kernel never
// counts).  time_runs gives such a candidate up after that one run on a GPU (CUDA events); host
// timings, which a preempted thread inflates, wait for min_runs.
bool hopeless_first_run(double first_us, double give_up_above_us);

// Median and MAD of a sample (sorted copy); empty input gives zeros.
Timing summarise(std::vector<double> samples_us);

// A reusable L2 flusher for one device (holds a buffer of twice the L2 size).
class CacheFlusher {
 public:
  explicit CacheFlusher(Device device);
  void flush(Stream stream);  // asynchronous on `stream`

 private:
  Device device_;
  Buffer scratch_;
};

// Times `run` (which queues one execution on `stream`, or runs synchronously on the host).
Timing time_runs(Device device, Stream stream, const std::function<void()>& run, const TimingOptions& options = {},
                 CacheFlusher* flusher = nullptr);

}  // namespace kiln
