// add_vectorized: float4 loads and stores, `items` chunks per thread per tile (f32).
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "add_cuda_variants.hpp"
#include "add_kernels.cuh"
#include "add_operands.hpp"
#include "add_params.hpp"

namespace kiln::elementwise {
namespace {

struct VectorLaunch {
  const float* a;
  const float* b;
  float* c;
  std::int64_t chunks;
  int tail;
  std::int64_t stride_a, stride_b, stride_c, tiles_per_row, tiles;
};

template <int kItems>
void launch_vectorized(const VectorLaunch& v, int grid, int block, cudaStream_t stream) {
  add_vectorized_kernel<kItems><<<grid, block, 0, stream>>>(v.a, v.b, v.c, v.chunks, v.tail, v.stride_a, v.stride_b,
                                                            v.stride_c, v.tiles_per_row, v.tiles);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

class AddVectorized final : public Variant {
 public:
  AddVectorized()
      : Variant(VariantDesc{"add_vectorized", "add", DeviceKind::cuda, {DType::f32}, 30,
                            "float4 loads/stores, several chunks per thread, grid-stride over row tiles"},
                add_vectorized_space()) {}

  Config default_config(const DeviceInfo& device) const override { return add_vectorized_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config&) const override {
    return add_vectorized_supports(problem);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/true);
    if (o.numel() == 0) return Status::success();
    const int block = config.get_or("block", 0);
    const int items = config.get_or("items", 0);
    const int blocks_per_sm = config.get_or("blocks_per_sm", -1);
    if (block <= 0 || block > 1024 || items <= 0 || blocks_per_sm < 0)
      return Status::fail(ErrorKind::argument, "add_vectorized: bad config " + config.to_string());
    // supports() saw problem.align_bytes; recheck the actual views (cheap) rather than fault.
    const bool strides_ok = o.m == 1 || (o.stride_a % 4 == 0 && o.stride_b % 4 == 0 && o.stride_c % 4 == 0);
    if (problem.dtype != DType::f32 || !aligned16(o.a) || !aligned16(o.b) || !aligned16(o.c) || !strides_ok)
      return Status::fail(ErrorKind::unsupported,
                          "add_vectorized: needs f32 with 16-byte aligned pointers and row pitches");
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "add_vectorized: cannot query the SM count");

    VectorLaunch v{static_cast<const float*>(o.a), static_cast<const float*>(o.b), static_cast<float*>(o.c),
                   o.n / 4, static_cast<int>(o.n % 4), o.stride_a, o.stride_b, o.stride_c, 0, 0};
    const std::int64_t tile_chunks = std::int64_t{block} * items;
    v.tiles_per_row = std::max<std::int64_t>(1, (v.chunks + tile_chunks - 1) / tile_chunks);
    v.tiles = o.m * v.tiles_per_row;
    // blocks_per_sm 0: one block per tile (no loop), else a grid-stride loop over the tiles.
    const std::int64_t cap = blocks_per_sm == 0 ? std::int64_t{2147483647} : std::int64_t{blocks_per_sm} * sms;
    const int grid = static_cast<int>(std::min<std::int64_t>(v.tiles, cap));
    const auto s = static_cast<cudaStream_t>(stream.handle());
    switch (items) {  // the instantiated list, kVectorItems
      case 1: launch_vectorized<1>(v, grid, block, s); break;
      case 2: launch_vectorized<2>(v, grid, block, s); break;
      case 4: launch_vectorized<4>(v, grid, block, s); break;
      case 8: launch_vectorized<8>(v, grid, block, s); break;
      default: return Status::fail(ErrorKind::argument, "add_vectorized: items=" + std::to_string(items) +
                                                            " is not instantiated (1, 2, 4, 8)");
    }
    return cuda_launch_status("add_vectorized");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_vectorized() { return std::make_shared<AddVectorized>(); }

}  // namespace kiln::elementwise
