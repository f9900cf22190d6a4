// Launchers of the simple gemm kernels: naive, row per block, and the three shared-memory tiled
// kernels (instantiated for tile 8, 16 and 32).
#include "gemm_simple_kernels.cuh"
#include "gemm_tiled_kernels.cuh"

namespace kiln::gemm {
namespace {

unsigned blocks_for(int extent, int per_block) { return static_cast<unsigned>((extent + per_block - 1) / per_block); }

template <int TILE, class KernelFn>
Status launch_tile_kernel(KernelFn kernel, const char* name, const GemmArgs& g, void* stream) {
  const dim3 grid(blocks_for(g.n, TILE), blocks_for(g.m, TILE));
  kernel<<<grid, dim3(TILE, TILE), 0, as_stream(stream)>>>(g);
  return cuda_launch_status(name);
}

}  // namespace

Status launch_naive(const GemmArgs& g, int block_x, int block_y, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  const dim3 grid(blocks_for(g.n, block_x), blocks_for(g.m, block_y));
  gemm_naive_kernel<<<grid, dim3(block_x, block_y), 0, as_stream(stream)>>>(g);
  return cuda_launch_status("gemm_naive");
}

Status launch_row_per_block(const GemmArgs& g, int block, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  gemm_row_per_block_kernel<<<static_cast<unsigned>(g.m), block, 0, as_stream(stream)>>>(g);
  return cuda_launch_status("gemm_row_per_block");
}

Status launch_tiled(const GemmArgs& g, int tile, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  switch (tile) {
    case 8: return launch_tile_kernel<8>(gemm_tiled_kernel<8>, "gemm_tiled", g, stream);
    case 16: return launch_tile_kernel<16>(gemm_tiled_kernel<16>, "gemm_tiled", g, stream);
    case 32: return launch_tile_kernel<32>(gemm_tiled_kernel<32>, "gemm_tiled", g, stream);
    default: break;
  }
  return Status::fail(ErrorKind::argument, "gemm_tiled: no instantiation for tile " + std::to_string(tile));
}

Status launch_tiled_coalesced(const GemmArgs& g, int tile, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  switch (tile) {
    case 16: return launch_tile_kernel<16>(gemm_tiled_coalesced_kernel<16>, "gemm_tiled_coalesced", g, stream);
    case 32: return launch_tile_kernel<32>(gemm_tiled_coalesced_kernel<32>, "gemm_tiled_coalesced", g, stream);
    default: break;
  }
  return Status::fail(ErrorKind::argument, "gemm_tiled_coalesced: no instantiation for tile " + std::to_string(tile));
}

Status launch_tiled_kahan(const GemmArgs& g, int tile, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  switch (tile) {
    case 16: return launch_tile_kernel<16>(gemm_tiled_kahan_kernel<16>, "gemm_tiled_kahan", g, stream);
    case 32: return launch_tile_kernel<32>(gemm_tiled_kahan_kernel<32>, "gemm_tiled_kahan", g, stream);
    default: break;
  }
  return Status::fail(ErrorKind::argument, "gemm_tiled_kahan: no instantiation for tile " + std::to_string(tile));
}

}  // namespace kiln::gemm
