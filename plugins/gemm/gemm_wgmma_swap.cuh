// The swapped small-m Hopper gemm (sm_90a): C = X * W^T computed as C^T = W * X^T, so that W (the
// gemm's B: n x k, the weights) fills wgmma's M and X (the gemm's A: m x k, a few rows of
// activations) its N.  With m = 1..64 the usual orientation wastes most of a 64-row wgmma on rows
// past m and spends shared memory on them; here a stage holds 64 (per consumer) rows of W and NM
// (16 or 64) rows of X, so nearly all of it is W, the operand that streams from DRAM.  This is
// what cuBLASLt runs for these shapes (nvjet ..._64x8_..._splitK_TNT, plugin README).
//
//  - Block = CONSUMERS consumer warpgroups (warps 0 .. 4 CONSUMERS - 1) + one producer warp.  Its
//    tile is 64 CONSUMERS rows of W (n) by NM rows of X (m); consumer c owns W rows [64 c, +64)
//    and all NM columns (wgmma m64nNMk16: A = the W tile, B = the X tile, both from shared
//    memory).  One producer thread issues TMA loads of both tiles (128-byte swizzled, 64 k per
//    stage) into STAGES buffers with full / empty mbarriers, as in gemm_wgmma.cuh.
//  - W K-major (B column-major, tb = 1) is one box of 64 CONSUMERS rows x 64 k; W MN-major (B
//    row-major, tb = 0: W stored k x n) is boxes of 64 n x 64 k rows, read by wgmma with its
//    transpose bit on the A operand (gemm_wgmma.cuh's load_operand and the MN-major descriptor).
//    X is K-major only (A row-major); supports() declines a column-major A for these rows.
//  - Not persistent: one block per (m tile, n tile, batch entry, k slice) work unit; two blocks
//    of the one-consumer row fit on an SM, so one fills its pipeline while the other streams.
//  - Split k (splits > 1): each unit writes its f32 partial tile to the workspace, in C's
//    orientation (row m, column n), and wgmma_split_reduce.cu adds the slices and applies alpha
//    and beta; unsplit, the epilogue applies them and writes C (f32 or the input type).  Either
//    way each thread stores its accumulators straight from registers, transposing as it goes:
//    thread (warp, lane) holds W rows 16 warp + lane / 4 (+8) and X rows 8 j + 2 (lane % 4) (+1),
//    so 8 lanes write 8 consecutive n of one output row (32 bytes of f32).  The output is m x n
//    with m small: its traffic is a sliver of W's.
//  - Edges: TMA fills rows past n or m and k past its end with zeros; stores are guarded.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "gemm_wgmma.cuh"
#include "hopper_ptx.cuh"
#include "wgmma_ops.cuh"

namespace kiln::gemm {

// What one launch of the swapped kernel reads besides the two tensor maps.
struct WgmmaSwapArgs {
  void* out;                    // C, or with splits > 1 the f32 partials
  int m, n, k, batch;
  long long ld_out;             // elements between rows (m) of out
  long long stride_out;         // elements between the third-index entries of out (batch entries,
                                // or with split k the partials of slice * batch + entry)
  float alpha, beta;            // split k: 1 and 0 (the reduction applies the caller's)
  int out_half;                 // out is the input type (else f32)
  int w_batched, x_batched;     // the tensor map has a third (batch) dimension
  int tiles_m, tiles_n, splits, kb_per_split;
};

namespace wgmma_swap_detail {

template <bool BF16, int NM, int TA>
__device__ __forceinline__ void mma_step(float (&d)[NM / 2], std::uint64_t desc_w, std::uint64_t desc_x) {
  if constexpr (BF16) {
    if constexpr (NM == 16) wgmma_m64n16k16_bf16<TA, 0>(d, desc_w, desc_x, 1);
    else wgmma_m64n64k16_bf16<TA, 0>(d, desc_w, desc_x, 1);
  } else {
    if constexpr (NM == 16) wgmma_m64n16k16_f16<TA, 0>(d, desc_w, desc_x, 1);
    else wgmma_m64n64k16_f16<TA, 0>(d, desc_w, desc_x, 1);
  }
}

}  // namespace wgmma_swap_detail

// W_MN: W is MN-major (B row-major).  NM: X rows per tile (wgmma N).
template <bool BF16, bool W_MN, int NM, int STAGES, int CONSUMERS>
__global__ void __launch_bounds__(128 * CONSUMERS + 32)
    gemm_wgmma_swap_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                           const WgmmaSwapArgs g) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(NM == 16 || NM == 64, "wgmma widths instantiated in wgmma_ops.cuh for the swapped kernel");
  constexpr int BK = 64;  // 128 bytes of 16-bit k per stage row
  constexpr int kWRows = 64 * CONSUMERS;
  constexpr int kWBytes = kWRows * 128, kXBytes = NM * 128, kStageBytes = kWBytes + kXBytes;
  static_assert(kWBytes % 1024 == 0 && kXBytes % 1024 == 0, "tiles stay 1024-byte aligned (128-byte swizzle)");

  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full_bar[STAGES];
  __shared__ __align__(8) std::uint64_t empty_bar[STAGES];
  unsigned char* smem = smem_raw + ((1024 - (hopper::smem_addr(smem_raw) & 1023)) & 1023);

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int wg_thread = static_cast<int>(threadIdx.x) % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      hopper::mbarrier_init(&full_bar[s], 1);
      hopper::mbarrier_init(&empty_bar[s], CONSUMERS);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();

  // The work unit: m tiles fastest (with m past one X tile, the blocks of one W tile run together
  // and read it from DRAM once, the others from L2), then n tiles, batch entries, k slices.
  const long long tiles = static_cast<long long>(g.tiles_m) * g.tiles_n;
  const long long unit = blockIdx.x;
  const long long entry = unit / tiles;  // slice * batch + batch entry
  const int bz = static_cast<int>(entry % g.batch);
  const int slice = static_cast<int>(entry / g.batch);
  const int t = static_cast<int>(unit % tiles);
  const int m0 = (t % g.tiles_m) * NM;
  const int n0 = (t / g.tiles_m) * kWRows;
  const int k_blocks = (g.k + BK - 1) / BK;
  const int kb0 = slice * g.kb_per_split;
  const int kb_count = max(0, min(g.kb_per_split, k_blocks - kb0));

  if (warpgroup == CONSUMERS) {  // the producer warp
    if (wg_thread == 0) {
      hopper::prefetch_tensor_map(&map_w);
      hopper::prefetch_tensor_map(&map_x);
      for (int it = 0; it < kb_count; ++it) {
        const int stage = it % STAGES;
        hopper::mbarrier_wait(&empty_bar[stage], ((it / STAGES) & 1) ^ 1);
        unsigned char* w_tile = smem + stage * kStageBytes;
        unsigned char* x_tile = w_tile + kWBytes;
        const int k0 = (kb0 + it) * BK;
        hopper::mbarrier_arrive_expect_tx(&full_bar[stage], kStageBytes);
        wgmma_detail::load_operand<W_MN, kWRows, BK>(w_tile, &map_w, &full_bar[stage], k0, n0, bz, g.w_batched);
        wgmma_detail::load_operand<false, NM, BK>(x_tile, &map_x, &full_bar[stage], k0, m0, bz, g.x_batched);
      }
    }
    return;
  }

  // Consumer `warpgroup`: W rows [64 warpgroup, +64) of the tile (64-row blocks sit 64 x 128
  // bytes apart in either majorness: gemm_wgmma.cuh's load_operand).
  const int warp = wg_thread / 32, lane = wg_thread % 32;
  float acc[NM / 2];
#pragma unroll
  for (int j = 0; j < NM / 2; ++j) acc[j] = 0.0f;
  int prev_stage = -1;
  for (int it = 0; it < kb_count; ++it) {
    const int stage = it % STAGES;
    hopper::mbarrier_wait(&full_bar[stage], (it / STAGES) & 1);
    const unsigned char* w_tile = smem + stage * kStageBytes + warpgroup * 64 * 128;
    const unsigned char* x_tile = smem + stage * kStageBytes + kWBytes;
    // A k16 step: 32 bytes along a K-major row (+2 in 16-byte units), 16 rows of 128 bytes of an
    // MN-major tile (+128).
    constexpr int kWStep = W_MN ? 16 * 128 / 16 : 2;
    const std::uint64_t desc_w =
        W_MN ? hopper::smem_desc_mn_major_sw128(w_tile, BK) : hopper::smem_desc_k_major_sw128(w_tile);
    const std::uint64_t desc_x = hopper::smem_desc_k_major_sw128(x_tile);
    hopper::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
      wgmma_swap_detail::mma_step<BF16, NM, W_MN ? 1 : 0>(acc, desc_w + kWStep * ks, desc_x + 2 * ks);
    hopper::wgmma_commit();
    hopper::wgmma_wait<1>();  // the previous k block's wgmmas have retired: release its buffer
    if (prev_stage >= 0 && wg_thread == 0) hopper::mbarrier_arrive(&empty_bar[prev_stage]);
    prev_stage = stage;
  }
  hopper::wgmma_wait<0>();
  hopper::fence_registers(acc);
  if (prev_stage >= 0 && wg_thread == 0) hopper::mbarrier_arrive(&empty_bar[prev_stage]);

  // Element 4 j + 2 h + e of acc: W row (n) 16 warp + lane / 4 + 8 h, X row (m) 8 j + 2 (lane % 4) + e.
  const long long base = entry * g.stride_out;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int col = n0 + warpgroup * 64 + warp * 16 + lane / 4 + 8 * h;
    if (col >= g.n) continue;
#pragma unroll
    for (int j = 0; j < NM / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = m0 + 8 * j + 2 * (lane % 4) + e;
        if (row >= g.m) continue;
        const long long at = base + static_cast<long long>(row) * g.ld_out + col;
        float v = g.alpha * acc[4 * j + 2 * h + e];
        if (g.out_half) {
          std::uint16_t* p = static_cast<std::uint16_t*>(g.out) + at;
          if (g.beta != 0.0f) v = fmaf(g.beta, wgmma_detail::load_half<BF16>(p), v);
          *p = static_cast<std::uint16_t>(wgmma_detail::pack_half2<BF16>(v, 0.0f) & 0xFFFF);
        } else {
          float* p = static_cast<float*>(g.out) + at;
          *p = g.beta == 0.0f ? v : fmaf(g.beta, *p, v);
        }
      }
  }
#else
  __trap();  // built without sm_90a features; supports() declines every other device
#endif
}

}  // namespace kiln::gemm
