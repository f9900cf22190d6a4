// add_streaming: one full wave of blocks, float4 chunks dealt round-robin to threads (a balanced
// grid-stride loop), any 4-byte alignment (f32).
#include <algorithm>
#include <cstdint>
#include <string>

#include <kiln/cuda_status.hpp>

#include "add_cuda_variants.hpp"
#include "add_operands.hpp"
#include "add_params.hpp"
#include "add_streaming_kernel.cuh"

namespace kiln::elementwise {
namespace {

constexpr std::int64_t kMaxGridY = 65535;

struct StreamingLaunch {
  const float* a;
  const float* b;
  float* c;
  std::int64_t m, n, stride_a, stride_b, stride_c;
};

template <int kItems, bool kStreaming>
cudaError_t launch_streaming(const StreamingLaunch& l, const StreamingConfig& cfg, int sms, cudaStream_t stream) {
  auto* kernel = &add_streaming_kernel<kItems, kStreaming>;
  int resident = 0;
  const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, cfg.block, 0);
  if (e != cudaSuccess) return e;
  // One full wave: every block resident at once, each with the same share of bytes.
  const std::int64_t wave = std::int64_t{std::max(1, std::min(cfg.blocks_per_sm, resident))} * sms;
  const std::int64_t grid_y = std::min(l.m, kMaxGridY);
  // Enough blocks per row that the wave is filled, but no block without a whole step of chunks.
  const std::int64_t chunks = l.n / 4;
  const std::int64_t step = std::int64_t{kItems} * cfg.block;
  std::int64_t grid_x = std::max<std::int64_t>(1, wave / grid_y);
  grid_x = std::max<std::int64_t>(1, std::min(grid_x, (chunks + step - 1) / step));
  kernel<<<dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y)), cfg.block, 0, stream>>>(
      l.a, l.b, l.c, l.m, l.n, l.stride_a, l.stride_b, l.stride_c);
  return cudaGetLastError();
}

bool aligned4(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4 == 0; }

class AddStreaming final : public Variant {
 public:
  AddStreaming()
      : Variant(VariantDesc{"add_streaming", "add", DeviceKind::cuda, {DType::f32}, 40,
                            "one full wave, balanced float4 grid-stride loop, several loads in flight, any alignment"},
                add_streaming_space()) {}

  Config default_config(const DeviceInfo& device) const override { return add_streaming_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config&) const override {
    return add_streaming_supports(problem);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/true);
    if (o.numel() == 0) return Status::success();
    StreamingConfig cfg;
    if (Status s = add_streaming_config_from(config, cfg); !s.ok()) return s;
    if (problem.dtype != DType::f32 || !aligned4(o.a) || !aligned4(o.b) || !aligned4(o.c))
      return Status::fail(ErrorKind::unsupported, "add_streaming: needs f32 with 4-byte aligned pointers");
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "add_streaming: cannot query the SM count");
    const StreamingLaunch l{static_cast<const float*>(o.a), static_cast<const float*>(o.b), static_cast<float*>(o.c),
                            o.m, o.n, o.stride_a, o.stride_b, o.stride_c};
    const auto s = static_cast<cudaStream_t>(stream.handle());
    cudaError_t e = cudaSuccess;
    switch (cfg.items * 2 + cfg.streaming) {  // kStreamingKernels
      case 4: e = launch_streaming<2, false>(l, cfg, sms, s); break;
      case 8: e = launch_streaming<4, false>(l, cfg, sms, s); break;
      case 16: e = launch_streaming<8, false>(l, cfg, sms, s); break;
      case 5: e = launch_streaming<2, true>(l, cfg, sms, s); break;
      case 9: e = launch_streaming<4, true>(l, cfg, sms, s); break;
      case 17: e = launch_streaming<8, true>(l, cfg, sms, s); break;
      default: return Status::fail(ErrorKind::argument, "add_streaming: " + config.to_string() + " is not instantiated");
    }
    return cuda_status(e, "add_streaming: kernel launch");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_streaming() { return std::make_shared<AddStreaming>(); }

}  // namespace kiln::elementwise
