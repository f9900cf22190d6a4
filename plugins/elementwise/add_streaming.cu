// add_streaming: 16-byte chunks dealt round-robin to threads (a balanced grid-stride loop), one
// full wave of blocks or a full grid, any alignment of the element type (f32, f16, bf16).
#include <algorithm>
#include <cstdint>
#include <memory>
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

// `resident`: blocks of this kernel per SM (streaming_occupancy), used when cfg.blocks_per_sm > 0.
template <class T, int kItems, int kCache>
cudaError_t launch_streaming(const AddOperands& o, const StreamingConfig& cfg, int sms, int resident,
                             cudaStream_t stream) {
  auto* kernel = &add_streaming_kernel<T, kItems, kCache>;
  constexpr std::int64_t kVec = 16 / sizeof(T);
  const std::int64_t grid_y = std::min(o.m, kMaxGridY);
  // Enough blocks per row that the wave is filled, but no block without a whole step of chunks.
  const std::int64_t chunks = o.n / kVec;
  const std::int64_t step = std::int64_t{kItems} * cfg.block;
  const std::int64_t per_row = std::max<std::int64_t>(1, (chunks + step - 1) / step);
  std::int64_t grid_x = per_row;  // blocks_per_sm 0: a full grid, one pass per thread
  if (cfg.blocks_per_sm > 0) {
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

template <class T, int kItems, int kCache>
cudaError_t streaming_occupancy(int block, int* resident) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(resident, &add_streaming_kernel<T, kItems, kCache>, block, 0);
}

// One instantiated kernel: its launcher and its occupancy query.
struct StreamingKernel {
  cudaError_t (*launch)(const AddOperands&, const StreamingConfig&, int, int, cudaStream_t) = nullptr;
  cudaError_t (*occupancy)(int, int*) = nullptr;
};

template <class T, int kItems, int kCache>
StreamingKernel streaming_kernel() {
  return {&launch_streaming<T, kItems, kCache>, &streaming_occupancy<T, kItems, kCache>};
}

// The instantiated kernel of (items, streaming) for element type T (kStreamingKernels).
template <class T>
StreamingKernel streaming_kernel_for(const StreamingConfig& cfg) {
  switch (cfg.items * 4 + cfg.streaming) {
    case 4: return streaming_kernel<T, 1, 0>();
    case 5: return streaming_kernel<T, 1, 1>();
    case 6: return streaming_kernel<T, 1, 2>();
    case 8: return streaming_kernel<T, 2, 0>();
    case 9: return streaming_kernel<T, 2, 1>();
    case 10: return streaming_kernel<T, 2, 2>();
    case 16: return streaming_kernel<T, 4, 0>();
    case 17: return streaming_kernel<T, 4, 1>();
    case 18: return streaming_kernel<T, 4, 2>();
    case 32: return streaming_kernel<T, 8, 0>();
    case 33: return streaming_kernel<T, 8, 1>();
    case 34: return streaming_kernel<T, 8, 2>();
    default: return {};  // add_streaming_config_from refused it already
  }
}

StreamingKernel streaming_kernel_for(DType dtype, const StreamingConfig& cfg) {
  switch (dtype) {
    case DType::f32: return streaming_kernel_for<float>(cfg);
    case DType::f16: return streaming_kernel_for<__half>(cfg);
    case DType::bf16: return streaming_kernel_for<__nv_bfloat16>(cfg);
    default: return {};
  }
}

// Blocks per SM the kernel can keep resident (0 when the config asks for a full grid).
cudaError_t resident_blocks(const StreamingKernel& k, const StreamingConfig& cfg, int* resident) {
  *resident = 0;
  return cfg.blocks_per_sm > 0 ? k.occupancy(cfg.block, resident) : cudaSuccess;
}

bool aligned_to(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

bool operands_aligned(const AddOperands& o, std::size_t size) {
  return aligned_to(o.a, size) && aligned_to(o.b, size) && aligned_to(o.c, size);
}

// The decision's bound launch: config parsed, kernel chosen, SM count and occupancy queried once,
// so a memo-hit op() reads the call's operands, checks their alignment and launches.
class StreamingLaunch final : public PreparedLaunch {
 public:
  StreamingLaunch(StreamingKernel kernel, StreamingConfig cfg, int sms, int resident, std::size_t size)
      : kernel_(kernel), cfg_(cfg), sms_(sms), resident_(resident), size_(size) {}
  Status run(const Args& args, const Problem&, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/true);
    if (o.numel() == 0) return Status::success();
    if (!operands_aligned(o, size_))
      return Status::fail(ErrorKind::unsupported, "add_streaming: pointers not aligned to the element size");
    const cudaError_t e = kernel_.launch(o, cfg_, sms_, resident_, static_cast<cudaStream_t>(stream.handle()));
    return e == cudaSuccess ? Status::success() : cuda_status(e, "add_streaming: kernel launch");
  }

 private:
  StreamingKernel kernel_;
  StreamingConfig cfg_;
  int sms_, resident_;
  std::size_t size_;
};

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
    if (!operands_aligned(o, size))
      return Status::fail(ErrorKind::unsupported, "add_streaming: pointers not aligned to the element size");
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "add_streaming: cannot query the SM count");
    const StreamingKernel k = streaming_kernel_for(problem.dtype, cfg);
    if (!k.launch) return Status::fail(ErrorKind::argument, "add_streaming: no kernel for " + config.to_string());
    int resident = 0;
    cudaError_t e = resident_blocks(k, cfg, &resident);
    if (e == cudaSuccess) e = k.launch(o, cfg, sms, resident, static_cast<cudaStream_t>(stream.handle()));
    return cuda_status(e, "add_streaming: kernel launch");
  }

  std::shared_ptr<const PreparedLaunch> prepare(const Problem& problem, const Config& config,
                                                const DeviceInfo& device) const override {
    StreamingConfig cfg;
    const int sms = sm_count(problem.device);
    StreamingKernel k;
    int resident = 0;
    if (!add_streaming_config_from(config, cfg).ok() || !add_streaming_supports(problem).ok || sms <= 0 ||
        !(k = streaming_kernel_for(problem.dtype, cfg)).launch || resident_blocks(k, cfg, &resident) != cudaSuccess)
      return Variant::prepare(problem, config, device);  // launch() reports what is wrong
    return std::make_shared<StreamingLaunch>(k, cfg, sms, resident, dtype_size(problem.dtype));
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_streaming() { return std::make_shared<AddStreaming>(); }

}  // namespace kiln::elementwise
