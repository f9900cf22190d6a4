// kiln_bench_add_overhead: 20 000 memo-hit op() calls of a tiny add (1 x 1024 f32) against 20 000
// raw launches of the same kernel (add_grid_stride_kernel<float>, same grid and block, same
// arguments, checked below against the decision's config), and the decision's bound launch
// (PreparedLaunch::run) for reference.  Host time per call, in batches
// of 200 (below the launch-queue depth, so the host measures its own work), interleaved with the
// order rotated each round (no kind always runs first after the synchronise), median batch; the
// headline is the median of each round's op() - raw difference, which the host's drift between
// rounds moves less than a difference of medians.  A benchmark, not a test: run it on the GPU machine and read the figures
//   build/bin/kiln_bench_add_overhead [calls]
// The result is checked at the end (c == a + b), so a broken launch path cannot look fast.
#include <cuda_runtime.h>

#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "add_cuda_variants.hpp"
#include "add_kernels.cuh"
#include "add_params.hpp"
#include "add_schema.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int batch = 200;
  if (calls < 2 * batch) {
    std::fprintf(stderr, "usage: kiln_bench_add_overhead [calls >= %d]\n", 2 * batch);
    return 2;
  }
  if (kiln::cuda_device_count() == 0) {
    std::fprintf(stderr, "kiln_bench_add_overhead: no CUDA device\n");
    return 77;
  }
  // Only add_grid_stride is registered, so op() runs exactly the kernel the raw loop launches.
  kiln::Registry reg;
  reg.add_op(kiln::elementwise::make_add_schema());
  reg.add_variant(kiln::elementwise::make_add_grid_stride());
  kiln::RuntimeOptions o;
  o.load_plugins = false;
  o.use_default_db_paths = false;
  o.tune_mode = "off";
  kiln::Runtime rt(std::move(reg), o);

  const kiln::Device gpu = kiln::Device::cuda(0);
  const std::int64_t n = 1024;
  std::vector<float> ha(n), hb(n);
  for (std::int64_t i = 0; i < n; ++i) ha[i] = 0.5f * float(i % 37) - 3.0f, hb[i] = float(i % 11) + 0.25f;
  auto a = kiln::Buffer::alloc(gpu, kiln::f32, {1, n});
  auto b = kiln::Buffer::alloc(gpu, kiln::f32, {1, n});
  auto c = kiln::Buffer::alloc(gpu, kiln::f32, {1, n});
  a.copy_from_host(ha.data(), n * sizeof(float));
  b.copy_from_host(hb.data(), n * sizeof(float));
  c.fill_bytes(0xFF);
  kiln::OwnedStream stream(gpu);
  const auto s = static_cast<cudaStream_t>(stream.get().handle());
  const kiln::Args args{a, b, c};

  kiln::Op add = rt.op("add");
  add(args, stream);  // the memo miss: decides and binds
  stream.synchronize();
  const kiln::Problem p = add.problem(args);
  const kiln::Decision* d = rt.dispatcher().find(p);
  if (!d || d->variant->name() != "add_grid_stride") {
    std::fprintf(stderr, "kiln_bench_add_overhead: op() did not memoise add_grid_stride\n");
    return 1;
  }
  const kiln::Config cfg = kiln::elementwise::add_grid_stride_default(kiln::device_info(gpu));
  // Like with like: the raw loop launches with the config op() decided, so the grid is the same.
  if (!(d->config == cfg)) {
    std::fprintf(stderr, "kiln_bench_add_overhead: op() decided [%s], the raw loop would launch [%s]\n",
                 d->config.to_string().c_str(), cfg.to_string().c_str());
    return 1;
  }
  const int block = cfg.get("block");
  const int grid = static_cast<int>(std::min<std::int64_t>((n + block - 1) / block,
                                                           std::int64_t{cfg.get("blocks_per_sm")} * kiln::sm_count(gpu)));
  const float* pa = a.ref().as<const float>();
  const float* pb = b.ref().as<const float>();
  float* pc = c.ref().as<float>();

  using clock = std::chrono::steady_clock;
  std::vector<double> op_us, raw_us, bound_us;
  for (int k = 0; k < calls / batch; ++k) {
    for (int r = 0; r < 3; ++r) {
      const int which = (r + k) % 3;
      cudaStreamSynchronize(s);
      const auto t0 = clock::now();
      if (which == 0) {
        for (int i = 0; i < batch; ++i) add(args, stream);
      } else if (which == 1) {
        for (int i = 0; i < batch; ++i) {
          kiln::elementwise::add_grid_stride_kernel<float><<<grid, block, 0, s>>>(pa, pb, pc, 1, n, n, n, n);
          (void)cudaGetLastError();  // what every kiln launch checks, so the comparison is fair
        }
      } else {
        for (int i = 0; i < batch; ++i) (void)d->launch->run(args, p, nullptr, stream);
      }
      const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count() / batch;
      (which == 0 ? op_us : which == 1 ? raw_us : bound_us).push_back(us);
    }
  }
  cudaStreamSynchronize(s);
  std::vector<float> hc(n);
  c.copy_to_host(hc.data(), n * sizeof(float));
  for (std::int64_t i = 0; i < n; ++i)
    if (hc[i] != ha[i] + hb[i]) {
      std::fprintf(stderr, "kiln_bench_add_overhead: wrong result at %lld\n", static_cast<long long>(i));
      return 1;
    }
  const double op = median(op_us), raw = median(raw_us), bound = median(bound_us);
  std::vector<double> diff(op_us.size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = op_us[k] - raw_us[k];
  std::sort(diff.begin(), diff.end());
  const double d25 = diff[diff.size() / 4], d50 = diff[diff.size() / 2], d75 = diff[diff.size() * 3 / 4];
  std::printf("add f32 1x%lld on cuda:0 (add_grid_stride, grid %d x block %d), %d calls of each, batches of %d:\n",
              static_cast<long long>(n), grid, block, (calls / batch) * batch, batch);
  std::printf("  op() (memo hit):   %.3f us per call\n", op);
  std::printf("  raw <<<>>> launch: %.3f us per call\n", raw);
  std::printf("  bound launch:      %.3f us per call (PreparedLaunch::run)\n", bound);
  std::printf("  median op() - median raw: %.3f us\n", op - raw);
  std::printf("  op() - raw, per round: median %.3f us (quartiles %.3f, %.3f; target: at most 0.2 us)\n", d50, d25, d75);
  return 0;
}
