// transpose_tiled_padded: a tile x tile block through a shared-memory tile padded by one element
// (the seeds' tiled transpose), grid-stride over tiles.
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "transpose_cuda_variants.hpp"
#include "transpose_copy.hpp"
#include "transpose_kernels.cuh"
#include "transpose_operands.hpp"
#include "transpose_params.hpp"

namespace kiln::transpose {
namespace {

template <class T, int kTile>
void launch_tiled_padded(const TransposeOperands& o, cudaStream_t stream) {
  const std::int64_t tiles_y = (o.m + kTile - 1) / kTile, tiles_x = (o.n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(tiles_x, 2147483647)),
                  static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)));
  transpose_tiled_padded_kernel<T, kTile>
      <<<grid, dim3(kTile, kTile), 0, stream>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n);
}

class TransposeTiledPadded final : public Variant {
 public:
  TransposeTiledPadded()
      : Variant(VariantDesc{"transpose_tiled_padded", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 40,
                            "tile x tile block through a padded shared-memory tile, both sides coalesced"},
                tiled_padded_space()) {}

  Config default_config(const DeviceInfo& device) const override { return tiled_padded_default(device); }

  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const TransposeOperands o = transpose_operands(args);
    if (o.numel() == 0) return Status::success();
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (o.copy) return transpose_copy(o, s, name());
    const int tile = config.get_or("tile", 0);
    const bool two = o.elem_bytes == 2;
    switch (tile) {  // the instantiated list, kPaddedTiles
      case 16: two ? launch_tiled_padded<std::uint16_t, 16>(o, s) : launch_tiled_padded<std::uint32_t, 16>(o, s); break;
      case 32: two ? launch_tiled_padded<std::uint16_t, 32>(o, s) : launch_tiled_padded<std::uint32_t, 32>(o, s); break;
      default:
        return Status::fail(ErrorKind::argument,
                            "transpose_tiled_padded: tile=" + std::to_string(tile) + " is not instantiated (16, 32)");
    }
    return cuda_launch_status("transpose_tiled_padded");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_tiled_padded() { return std::make_shared<TransposeTiledPadded>(); }

}  // namespace kiln::transpose
