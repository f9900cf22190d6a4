// add_streaming: 16-byte chunks dealt round-robin to threads (a balanced grid-stride loop), one
// full wave of blocks or a full grid, any alignment of the element type (f32, f16, bf16).
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

constexpr std::int64_t kMaxGridX = 2147483647;
constexpr std::int64_t kMaxGridY = 65535;

template <class T, int kItems, int kCache>
cudaError_t launch_streaming(const AddOperands& o, const StreamingConfig& cfg, int sms, cudaStream_t stream) {
  auto* kernel = &add_streaming_kernel<T, kItems, kCache>;
  constexpr std::int64_t kVec = 16 / sizeof(T);
  const std::int64_t grid_y = std::min(o.m, kMaxGridY);
  // Enough blocks per row that the wave is filled, but no block without a whole step of chunks.
  const std::int64_t chunks = o.n / kVec;
  const std::int64_t step = std::int64_t{kItems} * cfg.block;
  const std::int64_t per_row = std::max<std::int64_t>(1, (chunks + step - 1) / step);
  std::int64_t grid_x = per_row;  // blocks_per_sm 0: a full grid, one pass per thread
  if (cfg.blocks_per_sm > 0) {
    int resident = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, cfg.block, 0);
    if (e != cudaSuccess) return e;
    // One full wave: every block resident at once, each with the same share of bytes.
    const std::int64_t wave = std::int64_t{std::max(1, std::min(cfg.blocks_per_sm, resident))} * sms;
    grid_x = std::min(std::max<std::int64_t>(1, wave / grid_y), per_row);
  }
  grid_x = std::min(grid_x, kMaxGridX);
  kernel<<<dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y)), cfg.block, 0, stream>>>(
      static_cast<const T*>(o.a), static_cast<const T*>(o.b), static_cast<T*>(o.c), o.m, o.n, o.stride_a, o.stride_b,
      o.stride_c);
  return cudaGetLastError();
}

// The instantiated kernel of (items, streaming) for element type T (kStreamingKernels).
template <class T>
cudaError_t launch_for(const AddOperands& o, const StreamingConfig& cfg, int sms, cudaStream_t s) {
  switch (cfg.items * 4 + cfg.streaming) {
    case 8: return launch_streaming<T, 2, 0>(o, cfg, sms, s);
    case 9: return launch_streaming<T, 2, 1>(o, cfg, sms, s);
    case 10: return launch_streaming<T, 2, 2>(o, cfg, sms, s);
    case 16: return launch_streaming<T, 4, 0>(o, cfg, sms, s);
    case 17: return launch_streaming<T, 4, 1>(o, cfg, sms, s);
    case 18: return launch_streaming<T, 4, 2>(o, cfg, sms, s);
    case 32: return launch_streaming<T, 8, 0>(o, cfg, sms, s);
    case 33: return launch_streaming<T, 8, 1>(o, cfg, sms, s);
    case 34: return launch_streaming<T, 8, 2>(o, cfg, sms, s);
    default: return cudaErrorInvalidValue;  // add_streaming_config_from refused it already
  }
}

bool aligned_to(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

class AddStreaming final : public Variant {
 public:
  AddStreaming()
      : Variant(VariantDesc{"add_streaming", "add", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16}, 40,
                            "balanced grid-stride loop over 16-byte chunks, several loads in flight, any alignment"},
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
    if (Support sup = add_streaming_supports(problem); !sup.ok) return Status::fail(ErrorKind::unsupported, sup.reason);
    const std::size_t size = dtype_size(problem.dtype);
    if (!aligned_to(o.a, size) || !aligned_to(o.b, size) || !aligned_to(o.c, size))
      return Status::fail(ErrorKind::unsupported, "add_streaming: pointers not aligned to the element size");
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "add_streaming: cannot query the SM count");
    const auto s = static_cast<cudaStream_t>(stream.handle());
    cudaError_t e = cudaSuccess;
    switch (problem.dtype) {
      case DType::f32: e = launch_for<float>(o, cfg, sms, s); break;
      case DType::f16: e = launch_for<__half>(o, cfg, sms, s); break;
      default: e = launch_for<__nv_bfloat16>(o, cfg, sms, s); break;  // bf16 (supports() checked)
    }
    return cuda_status(e, "add_streaming: kernel launch");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_streaming() { return std::make_shared<AddStreaming>(); }

}  // namespace kiln::elementwise
