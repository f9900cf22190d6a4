#include "kiln/tuner/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

#include "cuda_backend.hpp"
#include "kiln/errors.hpp"
#include "logger.hpp"
#include "kiln/op_schema.hpp"

namespace kiln {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ProblemData make_data(const Problem& problem, const EvaluatorOptions& options, double& seconds) {
  if (!problem.schema) throw ArgumentError("ProblemEvaluator: the problem has no op schema");
  const auto t0 = std::chrono::steady_clock::now();
  ProblemDataOptions data_options;
  data_options.pitched = options.pitched;
  data_options.reference = false;  // prepare_expected decides: host reference or oracle
  // The problem keeps the alignment class the caller asked about (supports() decisions were
  // made with it); the buffers allocated here are at least as aligned.
  ProblemData data(*problem.schema, problem, problem.device, options.seed, data_options);
  seconds = seconds_since(t0);
  return data;
}

std::string format_error(double error, double tolerance) {
  char buf[160];
  if (std::isnan(error) || std::isinf(error))
    std::snprintf(buf, sizeof buf, "wrong result: NaN or unwritten outputs (relative error %g, tolerance %g)", error,
                  tolerance);
  else
    std::snprintf(buf, sizeof buf, "wrong result: relative error %.3g > tolerance %.3g", error, tolerance);
  return buf;
}

// Thrown from inside a timed run to leave time_runs early.
struct RunFailed {
  std::string message;
};

}  // namespace

ProblemEvaluator::ProblemEvaluator(const Problem& problem, EvaluatorOptions options)
    : device_(problem.device),
      options_(options),
      data_(make_data(problem, options, prepare_seconds_)),
      stream_(problem.device) {
  if (device_.is_cuda() && !options_.warm) flusher_ = std::make_unique<CacheFlusher>(device_);
  prepare_expected(problem);
}

void ProblemEvaluator::prepare_expected(const Problem& problem) {
  const auto t0 = std::chrono::steady_clock::now();
  if (options_.oracle) {
    const Candidate& o = *options_.oracle;
    std::string refused;
    try {
      if (device_.is_cuda()) detail::cuda_set_device(device_.ordinal);
      const std::size_t bytes = o.variant->workspace_bytes(data_.problem(), o.config);
      if (bytes > workspace_.bytes()) workspace_ = Buffer::alloc(device_, u8, {static_cast<std::int64_t>(bytes)});
      const OracleCheck check = data_.use_oracle(*o.variant, o.config, bytes ? workspace_.data() : nullptr,
                                                 stream_.get(), options_.oracle_samples);
      if (check.status.ok()) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " checked on %lld sampled elements (error %.2g, limit %.2g)",
                      static_cast<long long>(check.samples), check.error, check.tolerance);
        expected_source_ = "oracle " + o.to_string() + buf;
      } else {
        refused = check.status.message();
      }
    } catch (const std::exception& e) {
      refused = std::string("oracle ") + o.to_string() + " failed: " + e.what();
    }
    if (refused.empty()) {
      reference_done_ = true;
      reference_seconds_ = seconds_since(t0);
      prepare_seconds_ += reference_seconds_;
      return;
    }
    if (device_.is_cuda() && !detail::cuda_device_healthy(device_.ordinal))
      throw CudaError("ProblemEvaluator: the oracle left the device unusable: " + refused);
    logger()->warn("{} {}: {}; using the host reference", problem.schema->name, problem.key(), refused);
    expected_source_ = "host reference (" + refused + ")";
  } else {
    expected_source_ = "host reference";
  }
  if (options_.background_reference) {
    // The reference reads host copies of the inputs taken when they were drawn, and writes only
    // the expected-output buffers, so candidates can run meanwhile.
    pending_ = std::async(std::launch::async, [this] {
      const auto t1 = std::chrono::steady_clock::now();
      data_.compute_reference();
      return seconds_since(t1);
    });
    return;
  }
  data_.compute_reference();
  reference_done_ = true;
  reference_seconds_ = seconds_since(t0);
  prepare_seconds_ += reference_seconds_;
}

ProblemEvaluator::~ProblemEvaluator() {
  if (pending_.valid()) pending_.wait();
}

bool ProblemEvaluator::reference_ready(bool wait) {
  if (reference_done_) return true;
  if (!reference_error_.empty() || !pending_.valid()) return false;
  if (!wait && pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  try {
    reference_seconds_ = pending_.get();
    reference_done_ = true;
  } catch (const std::exception& e) {
    reference_error_ = e.what();
    return false;
  }
  return true;
}

Status ProblemEvaluator::launch(ProblemData& data, const Candidate& c) {
  try {
    const std::size_t bytes = c.variant->workspace_bytes(data.problem(), c.config);
    if (bytes > workspace_.bytes()) {
      workspace_ = Buffer();
      workspace_ = Buffer::alloc(device_, u8, {static_cast<std::int64_t>(bytes)});
    }
    return c.variant->launch(data.device_args(), data.problem(), c.config, bytes ? workspace_.data() : nullptr,
                             stream_.get());
  } catch (const std::exception& e) {
    // Variants must not throw; one that does is a failed candidate, not a failed tuner.
    return Status::fail(ErrorKind::internal, std::string("threw: ") + e.what());
  } catch (...) {
    return Status::fail(ErrorKind::internal, "threw an unknown exception");
  }
}

CandidateResult ProblemEvaluator::fault(const Candidate& c, const std::string& what) {
  CandidateResult r;
  r.candidate = c;
  r.outcome = Outcome::fault;
  r.reason = what;
  if (device_.is_cuda() && !detail::cuda_device_healthy(device_.ordinal)) {
    device_lost_ = true;
    r.device_lost = true;
    r.reason += " (the device is unusable for the rest of this process)";
  }
  return r;
}

CandidateResult ProblemEvaluator::validate(ProblemData& data, const Candidate& c, bool compare) {
  CandidateResult r;
  r.candidate = c;
  r.tolerance = data_.tolerance();
  if (device_lost_) {
    r.outcome = Outcome::fault;
    r.reason = "not run: the device was lost earlier in this process";
    r.device_lost = true;
    return r;
  }
  try {
    if (device_.is_cuda()) detail::cuda_set_device(device_.ordinal);
    data.poison_outputs();
    const auto t0 = std::chrono::steady_clock::now();
    Status st = launch(data, c);
    if (device_.is_cuda()) {
      const std::string err = detail::cuda_last_error();
      if (!st.ok() && st.kind() == ErrorKind::cuda) return fault(c, "launch failed: " + st.message());
      if (!err.empty()) return fault(c, "launch failed: " + err + (st.ok() ? "" : " (" + st.message() + ")"));
    }
    if (!st.ok()) {
      r.outcome = Outcome::failed;
      r.reason = "launch returned an error: " + st.message();
      return r;
    }
    stream_.synchronize();  // throws CudaError for a fault during the run
    last_check_us_ = 1e6 * seconds_since(t0);
    if (!compare) {
      r.provisional = true;
      return r;
    }
    r.error = data.error();
  } catch (const CudaError& e) {
    return fault(c, e.what());
  } catch (const std::exception& e) {
    r.outcome = Outcome::failed;
    r.reason = std::string("validation failed: ") + e.what();
    return r;
  }
  if (!(r.error <= r.tolerance)) {
    r.outcome = Outcome::failed;
    r.reason = format_error(r.error, r.tolerance);
  }
  return r;
}

CandidateResult ProblemEvaluator::check(const Candidate& c) {
  if (reference_ready(false)) return validate(data_, c, true);
  if (!reference_error_.empty()) return confirm(c);
  return validate(data_, c, false);  // the reference is still being computed
}

CandidateResult ProblemEvaluator::confirm(const Candidate& c) {
  if (!reference_ready(true)) {
    CandidateResult r;
    r.candidate = c;
    r.outcome = Outcome::failed;
    r.reason = "not validated: the host reference failed: " + reference_error_;
    return r;
  }
  return validate(data_, c, true);
}

CandidateResult ProblemEvaluator::time(const Candidate& c, const TimingOptions& options) {
  CandidateResult r;
  r.candidate = c;
  r.tolerance = data_.tolerance();
  if (device_lost_) return fault(c, "not run: the device was lost earlier in this process");
  TimingOptions o = options;
  // Bound the time spent on this candidate by its check run's duration (an over-estimate on
  // CUDA: it includes the launch and the synchronisation).
  if (last_check_us_ > 0.0 && options_.max_seconds_per_candidate > 0.0) {
    // Clamped: converting a double above INT_MAX to int is undefined.
    const double affordable = std::min(1e6 * options_.max_seconds_per_candidate / last_check_us_, 1e9);
    const int floor_runs = std::min(o.runs, std::max(1, o.min_runs));
    o.runs = std::max(floor_runs, std::min(o.runs, static_cast<int>(affordable)));
    o.warmup = std::min(o.warmup, std::max(1, static_cast<int>(affordable / 4)));
  }
  // The estimate above trusts one check run; the cap itself is enforced by the clock.
  if (options_.max_seconds_per_candidate > 0.0) o.max_seconds = options_.max_seconds_per_candidate;
  try {
    if (device_.is_cuda()) detail::cuda_set_device(device_.ordinal);
    auto run = [&] {
      Status st = launch(data_, c);
      if (!st.ok()) throw RunFailed{st.message()};
    };
    r.timing = time_runs(device_, stream_.get(), run, o, flusher_.get());
    if (device_.is_cuda()) {
      stream_.synchronize();
      const std::string err = detail::cuda_last_error();
      if (!err.empty()) return fault(c, "error while timing: " + err);
    }
    if (r.timing.gave_up) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "timing stopped after %d runs: median above %.1f us, it cannot win",
                    r.timing.samples, o.give_up_above_us);
      r.reason = buf;
    }
  } catch (const RunFailed& f) {
    if (device_.is_cuda()) return fault(c, "launch failed while timing: " + f.message);
    r.outcome = Outcome::failed;
    r.reason = "launch failed while timing: " + f.message;
  } catch (const CudaError& e) {
    return fault(c, std::string("error while timing: ") + e.what());
  } catch (const std::exception& e) {
    r.outcome = Outcome::failed;
    r.reason = std::string("timing failed: ") + e.what();
  }
  return r;
}

}  // namespace kiln
