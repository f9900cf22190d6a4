// tuner_fault: y = 2 x with a tunable host variant that misbehaves at chosen sizes, so the worker
// pool of `kiln tune --devices` can be tested on a CPU:
//   n = 666            every candidate of tuner_fault_loop calls abort(): the worker dies each time;
//   n = 777            the first candidate aborts once per marker file: when $KILN_TEST_FAULT_ONCE
//                      names a file that does not exist, it creates it and aborts (a retry passes);
//   n % 1000 == 555    each launch sleeps 100 ms: a slow problem to interrupt.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>

#include <kiln/variant.hpp>

#include "fixture_ops.hpp"

namespace {

// Dies like a crashing kernel would, without leaving a core file behind.
[[noreturn]] void crash() {
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::abort();
}

bool first_time_for_marker() {
  const char* path = std::getenv("KILN_TEST_FAULT_ONCE");
  if (!path || !*path || ::access(path, F_OK) == 0) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::FILE* f = std::fopen(path, "w");
  if (!f) return false;  // no marker, no crash: the retry test then fails visibly
  std::fclose(f);
  return true;
}

class FaultyLoop final : public kiln::Variant {
 public:
  FaultyLoop(kiln::VariantDesc desc, kiln::ParamSpace space, kiln::Config def, bool faulty)
      : Variant(std::move(desc), std::move(space)), default_(std::move(def)), faulty_(faulty) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return default_; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config& c, void*,
                      kiln::Stream) const override {
    const std::int64_t n = p.dims[0];
    if (faulty_) {
      if (n == 666 || (n == 777 && first_time_for_marker())) crash();
      if (n % 1000 == 555) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const float* x = a.tensor(0).as<const float>();
    float* y = a.tensor(1).as<float>();
    const std::int64_t step = c.get_or("unroll", 1);
    std::int64_t i = 0;
    for (; i + step <= n; i += step)
      for (std::int64_t k = 0; k < step; ++k) y[i + k] = 2.0f * x[i + k];
    for (; i < n; ++i) y[i] = 2.0f * x[i];
    return kiln::Status();
  }

 private:
  kiln::Config default_;
  bool faulty_;
};

}  // namespace

kiln::Status register_tuner_fault(kiln::Registry& r) noexcept {
  try {
    r.add_op(vector_op("tuner_fault", 2.0f));
    kiln::VariantDesc ref{"tuner_fault_ref", "tuner_fault", kiln::DeviceKind::host, {kiln::f32}, 0, "plain loop (reference)"};
    ref.reference = true;
    r.add_variant(std::make_shared<FaultyLoop>(ref, kiln::ParamSpace(), kiln::Config(), false));
    kiln::VariantDesc loop{"tuner_fault_loop", "tuner_fault", kiln::DeviceKind::host, {kiln::f32}, 10,
                           "unrolled loop that aborts or sleeps at chosen sizes"};
    r.add_variant(std::make_shared<FaultyLoop>(loop, kiln::ParamSpace().param("unroll", {1, 2, 4}),
                                               kiln::Config{{"unroll", 2}}, true));
    return kiln::Status();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}
