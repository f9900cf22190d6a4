// Uses the plugin's op through kiln::Runtime, as any kiln user would:
//
//   KILN_PLUGIN_PATH=$PWD/build: ./build/run_scale_example
//
// (the empty entry after ':' stands for kiln's installed plugins).  Prints the plugins loaded,
// where each variant of `scale` came from, runs the op on the host (and on CUDA device 0 when there
// is one and the plugin was built with CUDA), checks the results and prints "scale_example: ok".
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

// Runs scale (alpha = 0.5) on `device` and returns the number of wrong elements.
std::int64_t run_on(kiln::Runtime& rt, kiln::Device device, std::int64_t n) {
  std::vector<float> xs(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) xs[i] = static_cast<float>(i % 1000) - 500.0f;
  auto x = kiln::Buffer::alloc(device, kiln::f32, {n});
  auto y = kiln::Buffer::alloc(device, kiln::f32, {n});
  x.copy_from_host(xs.data(), xs.size() * sizeof(float));
  y.fill_bytes(0xff);  // NaN, so an element the op did not write is caught

  kiln::OwnedStream stream(device);
  rt.op("scale")(kiln::Args({x, y}, {0.5}), stream);
  stream.synchronize();

  const kiln::Problem problem = rt.op("scale").problem(kiln::Args({x, y}, {0.5}));
  std::cout << "  " << device.to_string() << ": ran " << rt.explain(problem).variant->name() << "\n";
  const std::vector<float> ys = y.to_host<float>();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += ys[i] != 0.5f * xs[i];
  return wrong;
}

}  // namespace

int main() {
  try {
    kiln::Runtime rt;  // loads the plugins on KILN_PLUGIN_PATH
    std::cout << "loaded plugins:\n";
    for (const std::string& file : rt.loaded_plugins()) std::cout << "  " << file << "\n";
    for (const kiln::PluginLoadError& e : rt.plugin_errors()) std::cerr << "skipped " << e.file << ": " << e.reason << "\n";

    std::cout << "variants of scale:\n";
    for (const kiln::Variant* v : rt.registry().variants("scale")) {
      std::cout << "  " << std::left << std::setw(24) << v->name() << rt.registry().source_of(*v).to_string() << "\n";
    }

    const std::int64_t n = 100003;  // a prime: no block size divides it
    std::int64_t wrong = run_on(rt, rt.host(), n);
    // The CUDA variant exists only when the plugin was built with CUDA.
    bool cuda_variant = false;
    for (const kiln::Variant* v : rt.registry().variants("scale")) cuda_variant |= v->device_kind() == kiln::DeviceKind::cuda;
    if (cuda_variant && kiln::cuda_device_count() > 0) wrong += run_on(rt, rt.device(0), n);
    if (wrong != 0) {
      std::cout << "scale_example: " << wrong << " wrong elements\n";
      return 1;
    }
    std::cout << "scale_example: ok\n";
    return 0;
  } catch (const kiln::Error& e) {
    std::cerr << "scale_example: " << e.what() << "\n";
    return 1;
  }
}
