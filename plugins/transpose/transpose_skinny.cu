// transpose_skinny: whole-short-side tiles for matrices with one short side (see
// transpose_skinny_kernel.cuh).
#include <algorithm>
#include <cstdint>
#include <string>

#include <kiln/cuda_status.hpp>

#include "transpose_cuda_variants.hpp"
#include "transpose_copy.hpp"
#include "transpose_operands.hpp"
#include "transpose_params.hpp"
#include "transpose_skinny_kernel.cuh"

namespace kiln::transpose {
namespace {

template <class T, int BLOCK>
cudaError_t launch_skinny(const TransposeOperands& o, const SkinnyTile& t, const SkinnyPairs& pairs, int sms,
                          cudaStream_t stream) {
  auto* kernel = &transpose_skinny_kernel<T, BLOCK>;
  const int smem = static_cast<int>(t.smem_bytes(static_cast<int>(sizeof(T))));
  // Up to 1.5 x tile_bytes (a 2-row tile's odd pitch is 3): past the default 48 KiB, opt in.
  cudaError_t e = cudaSuccess;
  if (smem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  int resident = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, BLOCK, smem);
  if (e != cudaSuccess) return e;
  const std::int64_t tiles_c = (o.n + t.cols - 1) / t.cols;
  const std::int64_t tiles = tiles_c * ((o.m + t.rows - 1) / t.rows);
  const std::int64_t grid = std::min<std::int64_t>(tiles, std::int64_t{std::max(1, resident)} * sms);
  kernel<<<static_cast<unsigned>(grid), BLOCK, smem, stream>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n,
                                                               t.rows, t.cols, t.pitch, tiles_c, tiles, pairs.in,
                                                               pairs.out);
  return cudaGetLastError();
}

class TransposeSkinny final : public Variant {
 public:
  TransposeSkinny()
      : Variant(VariantDesc{"transpose_skinny", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 55,
                            "tiles spanning the short side, linear reads and writes (one side <= 256)"},
                skinny_space()) {}

  Config default_config(const DeviceInfo& device) const override { return skinny_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config&) const override {
    return skinny_supports(problem);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const TransposeOperands o = transpose_operands(args);
    if (o.numel() == 0) return Status::success();
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (o.copy) return transpose_copy(o, s, name());
    const int block = config.get_or("block", 0), tile_bytes = config.get_or("tile_bytes", 0);
    if (tile_bytes < 2048 || tile_bytes > 65536)
      return Status::fail(ErrorKind::argument, "transpose_skinny: tile_bytes must be in [2048, 65536], got " +
                                                   std::to_string(tile_bytes));
    if (std::min(o.m, o.n) > kSkinnyMaxShort)
      return Status::fail(ErrorKind::unsupported, "transpose_skinny: no side of at most 256");
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "transpose_skinny: cannot query the SM count");
    const int access_bytes = config.get_or("access_bytes", 4);  // absent: the default
    if (access_bytes != 2 && access_bytes != 4)
      return Status::fail(ErrorKind::argument, "transpose_skinny: access_bytes must be 2 or 4, got " +
                                                   std::to_string(access_bytes));
    const bool two = o.elem_bytes == 2;
    if (!two && access_bytes != 4)
      return Status::fail(ErrorKind::argument, "transpose_skinny: access_bytes=2 is for 2-byte types only");
    const bool want_pairs = two && access_bytes == 4;
    const SkinnyTile t = skinny_tile(o.m, o.n, tile_bytes / o.elem_bytes, want_pairs ? 2 : 1);
    SkinnyPairs pairs;
    if (want_pairs)
      pairs = skinny_pairs(reinterpret_cast<std::uintptr_t>(o.in), reinterpret_cast<std::uintptr_t>(o.out), o.ld_in,
                           o.ld_out, o.m, o.n, t);
    cudaError_t e = cudaSuccess;
    switch (block) {  // kSkinnyBlocks
      case 256: e = two ? launch_skinny<std::uint16_t, 256>(o, t, pairs, sms, s) : launch_skinny<std::uint32_t, 256>(o, t, pairs, sms, s); break;
      case 512: e = two ? launch_skinny<std::uint16_t, 512>(o, t, pairs, sms, s) : launch_skinny<std::uint32_t, 512>(o, t, pairs, sms, s); break;
      case 1024: e = two ? launch_skinny<std::uint16_t, 1024>(o, t, pairs, sms, s) : launch_skinny<std::uint32_t, 1024>(o, t, pairs, sms, s); break;
      default: return Status::fail(ErrorKind::argument, "transpose_skinny: block=" + std::to_string(block) +
                                                            " is not instantiated (256, 512, 1024)");
    }
    return cuda_status(e, "transpose_skinny: kernel launch");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_skinny() { return std::make_shared<TransposeSkinny>(); }

}  // namespace kiln::transpose
