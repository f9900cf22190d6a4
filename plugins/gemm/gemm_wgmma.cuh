// Hopper bf16 / f16 / TF32 / 3xTF32 gemm: wgmma.mma_async fed by TMA, warp-specialised and persistent (sm_90a).
//
//  - Block = 1 producer warpgroup + CONSUMERS consumer warpgroups.  One producer thread issues
//    TMA loads of the A tile (BM rows x 128 bytes of k: 64 16-bit or 32 f32 elements) and the B
//    tile (BN rows x 128 bytes of k, B column-major, so both are K-major; or, A_MN / B_MN for a
//    column-major A / row-major B of 16-bit types, boxes of 64 m / n (128 bytes) x 64 k rows,
//    MN-major, read by wgmma with its transpose bit: hopper_ptx.cuh derives their descriptor)
//    into STAGES shared-memory buffers with 128-byte swizzling; each buffer has a
//    "full" mbarrier (TMA bytes arrive) and an "empty" one (each consumer warpgroup that reads
//    the buffer arrives once it has finished).  The producer gives registers up (setmaxnreg.dec), the consumers
//    take them for their f32 accumulators (setmaxnreg.inc).
//  - Cooperative (PINGPONG = false): consumer warpgroup c computes rows [c * BM / CONSUMERS,
//    +BM / CONSUMERS) of each tile.  Ping-pong: consumer c computes every CONSUMERS-th tile of the
//    block whole; the producer loads tiles in order, so the consumers' main loops take turns and
//    one stores its tile while the other keeps the tensor cores busy.  Either way wgmma m64 x BN x
//    k16 (k8 for TF32: 32 bytes of the row either way; A and B from shared-memory descriptors)
//    with one wgmma group in flight: a buffer is
//    released when the group after it has been issued and it has retired.
//  - Persistent: the grid has at most one block per SM; block b computes tiles b, b + grid, ...
//    in a rasterised order (groups of `group` tile rows, gemm_common.cuh's grouped_tile), batch
//    entries one after the other.  With CLUSTER = 2 the two blocks of a thread-block cluster take
//    vertically adjacent tiles, which share the B tile: each loads half of it with a TMA multicast
//    to both, and a stage is released only when both blocks' consumers are done with it.  The producer runs ahead into the next tile while the consumers
//    store the last one.
//  - Edges: TMA fills elements outside A and B with zeros (k past its end adds nothing, rows
//    past m or n give outputs that are not stored); stores are guarded.
//  - Epilogue: C = alpha * acc + beta * C in f32, stored as f32 or the input type.  With beta == 0
//    (C never read) the accumulators go through shared memory, 64 rows x 128 bytes at a time in
//    the 128-byte swizzled layout, to TMA stores (clipped at the matrix edge) that run on while
//    the warpgroup starts its next tile; two buffers per consumer.  With beta != 0 each thread
//    reads C and stores pairs straight from registers (guarded).
//  - Split k (g.splits > 1): a work unit is a (tile, k slice) pair; its f32 partial tile goes to
//    the workspace through the same TMA store (alpha 1), and wgmma_split_reduce.cu adds the
//    slices in order and applies alpha and beta.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gemm_common.cuh"
#include "hopper_ptx.cuh"
#include "wgmma_configs.hpp"
#include "wgmma_ops.cuh"

namespace kiln::gemm {

// What one launch reads besides the two tensor maps; built by launch_wgmma.
struct WgmmaKernelArgs {
  void* c;
  int m, n, k, batch;
  long long ldc, stride_c;
  float alpha, beta;
  int c_half;
  int c_tma;                            // 1: store C through TMA (beta == 0); 0: from registers
  int a_batched, b_batched, c_batched;  // the tensor map has a third (batch) dimension
  int tiles_m, tiles_n, group;
  // Split k: work unit u is tile (u % tiles per batch entry) of batch entry (u / tiles) % batch and
  // k slice u / (tiles * batch), which covers k blocks [slice * kb_per_split, + kb_per_split).
  // With splits > 1, map_c is the workspace of f32 partials (3-D: slice * batch + entry), alpha
  // is 1 and c_tma 1 (launch_wgmma); the reduction kernel (wgmma_split_reduce.cu) writes C.
  int splits, kb_per_split;
};

namespace wgmma_detail {

template <bool BF16>
__device__ __forceinline__ float load_half(const std::uint16_t* p) {
  if constexpr (BF16)
    return __bfloat162float(__ushort_as_bfloat16(*p));
  else
    return __half2float(__ushort_as_half(*p));
}
template <bool BF16>
__device__ __forceinline__ std::uint32_t pack_half2(float lo, float hi) {
  if constexpr (BF16)
    return __bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           (static_cast<std::uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
  else
    return __half_as_ushort(__float2half_rn(lo)) | (static_cast<std::uint32_t>(__half_as_ushort(__float2half_rn(hi))) << 16);
}

// TA / TB: the wgmma transpose bits, 1 for an MN-major operand (16-bit types only).
template <bool BF16, bool TF32, int N, int TA, int TB>
__device__ __forceinline__ void mma_step(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b) {
  if constexpr (TF32) {
    static_assert(TA == 0 && TB == 0, "tf32 wgmma reads K-major operands only");
    static_assert(N == 128 || N == 256, "tf32 wrappers: widths 128 and 256");
    if constexpr (N == 256) wgmma_m64n256k8_tf32(d, desc_a, desc_b, 1);
    else wgmma_m64n128k8_tf32(d, desc_a, desc_b, 1);
  } else if constexpr (BF16) {
    if constexpr (N == 256) wgmma_m64n256k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 224) wgmma_m64n224k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 192) wgmma_m64n192k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 160) wgmma_m64n160k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 96) wgmma_m64n96k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
    else wgmma_m64n128k16_bf16<TA, TB>(d, desc_a, desc_b, 1);
  } else {
    if constexpr (N == 256) wgmma_m64n256k16_f16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 224) wgmma_m64n224k16_f16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 192) wgmma_m64n192k16_f16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 160) wgmma_m64n160k16_f16<TA, TB>(d, desc_a, desc_b, 1);
    else if constexpr (N == 96) wgmma_m64n96k16_f16<TA, TB>(d, desc_a, desc_b, 1);
    else wgmma_m64n128k16_f16<TA, TB>(d, desc_a, desc_b, 1);
  }
}

// Loads one operand's stage tile of ROWS m (or n) x BK k into `dst`, completing on `bar`.  K-major
// (MN = false): one box, k innermost (coordinates k0, r0).  MN-major: ROWS / 64 boxes of 64 m / n
// (innermost, 128 bytes) x BK k rows, box j at dst + j * BK * 128 (coordinates r0 + 64 j, k0):
// the layout smem_desc_mn_major_sw128 describes.  Either way row r of the tile starts r * 128
// bytes in (K-major) or its 64-row block does (MN-major, with BK = 64).
template <bool MN, int ROWS, int BK>
__device__ __forceinline__ void load_operand(unsigned char* dst, const CUtensorMap* map, std::uint64_t* bar, int k0,
                                             int r0, int bz, int batched) {
  if constexpr (!MN) {
    if (batched)
      hopper::tma_load_3d(dst, map, bar, k0, r0, bz);
    else
      hopper::tma_load_2d(dst, map, bar, k0, r0);
  } else {
    static_assert(ROWS % 64 == 0, "MN-major tiles are whole 64-element boxes");
#pragma unroll
    for (int j = 0; j < ROWS / 64; ++j) {
      if (batched)
        hopper::tma_load_3d(dst + j * BK * 128, map, bar, r0 + 64 * j, k0, bz);
      else
        hopper::tma_load_2d(dst + j * BK * 128, map, bar, r0 + 64 * j, k0);
    }
  }
}

// Stores a pair of adjacent outputs (col, col + 1) of row `row`; the second only inside n.
template <bool BF16>
__device__ __forceinline__ void store_pair(const WgmmaKernelArgs& g, long long c_off, int row, int col, float v0,
                                           float v1) {
  if (row >= g.m || col >= g.n) return;
  const long long at = c_off + static_cast<long long>(row) * g.ldc + col;
  const bool pair = col + 1 < g.n;
  v0 *= g.alpha;
  v1 *= g.alpha;
  if (g.c_half) {
    std::uint16_t* p = static_cast<std::uint16_t*>(g.c) + at;
    if (g.beta != 0.0f) {
      v0 = fmaf(g.beta, load_half<BF16>(p), v0);
      if (pair) v1 = fmaf(g.beta, load_half<BF16>(p + 1), v1);
    }
    const std::uint32_t packed = pack_half2<BF16>(v0, v1);
    if (pair)
      *reinterpret_cast<std::uint32_t*>(p) = packed;
    else
      *p = static_cast<std::uint16_t>(packed & 0xFFFF);
  } else {
    float* p = static_cast<float*>(g.c) + at;
    if (pair) {
      float2* p2 = reinterpret_cast<float2*>(p);
      if (g.beta != 0.0f) {
        const float2 old = *p2;
        v0 = fmaf(g.beta, old.x, v0);
        v1 = fmaf(g.beta, old.y, v1);
      }
      *p2 = make_float2(v0, v1);
    } else {
      *p = g.beta == 0.0f ? v0 : fmaf(g.beta, *p, v0);
    }
  }
}

// Writes 64 rows x 128 bytes of one consumer's accumulators (rows of acc, columns [8 j0, 8 j0 +
// 128 / element size)) into `buf` in the 128-byte swizzled layout the TMA store reads: row r at
// r * 128 bytes, 16-byte chunk q at position q ^ (r % 8).  j0 must be a constant after unrolling
// (the accumulators stay in registers).  Thread (warp, lane) holds rows 16 warp
// + lane / 4 (+8), columns 8 j + 2 (lane % 4) (+1).
template <bool BF16, bool C_HALF, int N>
__device__ __forceinline__ void stage_chunk(unsigned char* buf, const float (&acc)[N], int j0, float alpha, int warp,
                                            int lane) {
  constexpr int kJ = C_HALF ? 8 : 4;  // 8-column groups per 128-byte row
#pragma unroll
  for (int jj = 0; jj < kJ; ++jj) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + 8 * h;
      const float v0 = alpha * acc[4 * (j0 + jj) + 2 * h];
      const float v1 = alpha * acc[4 * (j0 + jj) + 2 * h + 1];
      if constexpr (C_HALF) {
        const int q = jj;  // 16 bytes = 8 halves per group
        *reinterpret_cast<std::uint32_t*>(buf + r * 128 + ((q ^ (r & 7)) * 16) + (lane % 4) * 4) =
            pack_half2<BF16>(v0, v1);
      } else {
        const int q = 2 * jj + (lane % 4) / 2;  // 32 bytes = 8 floats per group
        *reinterpret_cast<float2*>(buf + r * 128 + ((q ^ (r & 7)) * 16) + (lane % 4 % 2) * 8) = make_float2(v0, v1);
      }
    }
  }
}

}  // namespace wgmma_detail

// Stores one consumer's tile (rows [row0, row0 + 64 M_ITERS), columns [n0, n0 + BN)) through the
// two shared-memory chunk buffers at `epi` and TMA stores; buffer reuse waits until the store that
// used it two chunks ago has read it.  A tile width that is not a whole number of chunks (96, 160
// and 224 with 16-bit C: 64 columns a chunk) stores its last 32 columns from registers (guarded
// pair stores, beta = 0 here): a TMA box past them would overwrite the next tile's columns.
template <bool C_HALF, bool BF16, int M_ITERS, int BN>
__device__ __forceinline__ void store_tile_tma_impl(float (&acc)[M_ITERS][BN / 2], unsigned char* epi, unsigned& count,
                                                    int row0, int n0, int bz, const WgmmaKernelArgs& g,
                                                    const CUtensorMap* map_c, int warp, int lane, int wg_thread,
                                                    int consumer) {
  constexpr int kColsPerChunk = C_HALF ? 64 : 32;
  constexpr int kChunks = BN / kColsPerChunk;
  constexpr int kTailCols = BN - kChunks * kColsPerChunk;
  static_assert(kTailCols % 8 == 0, "the tail is whole 8-column accumulator groups");
#pragma unroll
  for (int i = 0; i < M_ITERS; ++i) {
    if (row0 + i * 64 >= g.m) break;  // rows past m (small m: most of a 128-row tile): nothing to store
    if constexpr (kTailCols > 0) {
      const int row = row0 + i * 64 + warp * 16 + lane / 4;
      const long long c_off = static_cast<long long>(bz) * g.stride_c;
#pragma unroll
      for (int j = kChunks * kColsPerChunk / 8; j < BN / 8; ++j) {
        const int col = n0 + j * 8 + 2 * (lane % 4);
        wgmma_detail::store_pair<BF16>(g, c_off, row, col, acc[i][4 * j], acc[i][4 * j + 1]);
        wgmma_detail::store_pair<BF16>(g, c_off, row + 8, col, acc[i][4 * j + 2], acc[i][4 * j + 3]);
      }
    }
#pragma unroll
    for (int ch = 0; ch < kChunks; ++ch) {
      if (n0 + ch * kColsPerChunk >= g.n) break;  // columns past n
      unsigned char* buf = epi + (count & 1) * kWgmmaEpilogueChunkBytes;
      if (wg_thread == 0) hopper::bulk_wait_read<1>();
      hopper::named_barrier_sync(1 + consumer, 128);
      wgmma_detail::stage_chunk<BF16, C_HALF>(buf, acc[i], ch * kColsPerChunk / 8, g.alpha, warp, lane);
      hopper::fence_proxy_async_smem();
      hopper::named_barrier_sync(1 + consumer, 128);
      if (wg_thread == 0) {
        if (g.c_batched)
          hopper::tma_store_3d(map_c, buf, n0 + ch * kColsPerChunk, row0 + i * 64, bz);
        else
          hopper::tma_store_2d(map_c, buf, n0 + ch * kColsPerChunk, row0 + i * 64);
        hopper::bulk_commit();
      }
      ++count;
    }
  }
}

// Registers per thread after setmaxnreg: the producer keeps 40, each consumer gets 232
// (40 * 128 + 232 * 256 = 64512 of the SM's 65536, the pool a 384-thread block holds at 168).
inline constexpr int kWgmmaProducerRegs = 40;
inline constexpr int kWgmmaConsumerRegs = 232;

// BF16 / TF32: the input type (f16 when both are false; TF32 reads f32 bits, C is f32).  A_MN /
// B_MN: A column-major / B row-major (MN-major tiles, 16-bit types, no cluster).  SPLIT3 (TF32
// only): 3xTF32, map_a / map_b hold the operands' TF32 hi parts and map_a_lo / map_b_lo their lo
// parts (wgmma_3xtf32.hpp); each tile runs three k segments, A_lo * B_hi, A_hi * B_lo and
// A_hi * B_hi, into the same accumulators.  Without SPLIT3 the lo maps are not read.
template <bool BF16, bool TF32, bool A_MN, bool B_MN, int BM, int BN, int STAGES, int CONSUMERS, bool PINGPONG,
          int CLUSTER, bool SPLIT3>
// Launch bounds of a 384-thread block whatever CONSUMERS is: the register count stays at most 168,
// which the setmaxnreg split below (40 / 232) assumes (a one-consumer block, 256 threads, could
// otherwise compile to more than 232 registers and make setmaxnreg.inc a decrease).
__global__ void __launch_bounds__(384, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_c, const __grid_constant__ CUtensorMap map_a_lo,
                      const __grid_constant__ CUtensorMap map_b_lo, const WgmmaKernelArgs g) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!(BF16 && TF32), "one input type");
  static_assert(!TF32 || (!A_MN && !B_MN), "tf32 wgmma reads K-major operands only");
  static_assert(CLUSTER == 1 || (!A_MN && !B_MN), "the B multicast is built for K-major tiles only");
  static_assert(!SPLIT3 || TF32, "3xTF32 splits f32 operands");
  // k per stage: one 128-byte swizzled row (64 16-bit or 32 f32 elements), consumed in 4 wgmma k
  // steps of 32 bytes (k16 for 16-bit types, k8 for TF32).
  constexpr int kElemBytes = TF32 ? 4 : 2;
  constexpr int BK = 128 / kElemBytes;
  constexpr int kKSteps = 4;
  constexpr int kWgRows = PINGPONG ? BM : BM / CONSUMERS;  // rows of one consumer warpgroup
  constexpr int kReaders = PINGPONG ? 1 : CONSUMERS;       // warpgroups that read each stage
  constexpr int kMIters = kWgRows / 64;    // m64 wgmmas per k step
  constexpr int kABytes = BM * BK * kElemBytes, kBBytes = BN * BK * kElemBytes, kStageBytes = kABytes + kBBytes;
  static_assert(kABytes == BM * 128 && kBBytes == BN * 128, "tile rows are one 128-byte swizzle span");
  // MN-major tiles: 64-element boxes of BK = 64 k rows, so the 64-row block b starts b * 64 * 128
  // bytes in, where a K-major tile has its row 64 b: the consumers' offsets hold for both.
  static_assert((!A_MN && !B_MN) || BK == 64, "MN-major boxes are 64 x 64 16-bit elements");
  static_assert(kWgRows % 64 == 0, "each consumer warpgroup computes whole 64-row wgmma tiles");
  static_assert(BN == 96 || BN == 128 || BN == 160 || BN == 192 || BN == 224 || BN == 256,
                "wgmma widths instantiated in wgmma_ops.cuh");
  static_assert(!TF32 || BN == 128 || BN == 256, "tf32 wrappers: widths 128 and 256");
  static_assert(BM <= 256 && BN <= 256, "a TMA box has at most 256 rows");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "tiles stay 1024-byte aligned (128-byte swizzle)");
  static_assert(CLUSTER == 1 || (CLUSTER == 2 && !PINGPONG), "clusters of 2, cooperative consumers only");
  static_assert((BN / CLUSTER) * 128 % 1024 == 0, "each block's share of the B tile stays 1024-byte aligned");

  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full_bar[STAGES];
  __shared__ __align__(8) std::uint64_t empty_bar[STAGES];
  // Ping-pong turns: consumer c arrives on turn_bar[c] when it has received the last stage of its
  // tile; the next consumer waits for that before its own first stage.  Without it a consumer
  // that skips the other's tile would wait on a stage two phases ahead, which a parity wait
  // cannot tell from the phase just completed.
  __shared__ __align__(8) std::uint64_t turn_bar[CONSUMERS];
  unsigned char* smem = smem_raw + ((1024 - (hopper::smem_addr(smem_raw) & 1023)) & 1023);

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int wg_thread = static_cast<int>(threadIdx.x) % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      hopper::mbarrier_init(&full_bar[s], 1);
      hopper::mbarrier_init(&empty_bar[s], kReaders * CLUSTER);  // every block's readers release
    }
    for (int c = 0; c < CONSUMERS; ++c) hopper::mbarrier_init(&turn_bar[c], 1);
    hopper::fence_barrier_init();
  }
  // With a cluster, the peer's barriers must be initialised before any multicast or remote arrival.
  if constexpr (CLUSTER > 1)
    hopper::cluster_sync();
  else
    __syncthreads();

  // Work units: a unit is CLUSTER vertically adjacent tiles (one per block of the cluster, which
  // share the B tile: each block loads its half and multicasts it to both).  Clusters walk the
  // units in the rastered order; without a cluster a unit is one tile.
  const unsigned rank = CLUSTER > 1 ? hopper::cluster_ctarank() : 0;
  const long long first_unit = blockIdx.x / CLUSTER, unit_step = gridDim.x / CLUSTER;
  const int units_m = (g.tiles_m + CLUSTER - 1) / CLUSTER;
  const int units_per_batch = units_m * g.tiles_n;
  const long long total_units = static_cast<long long>(units_per_batch) * g.batch * g.splits;
  const int k_blocks = (g.k + BK - 1) / BK;
  // Pipeline steps per unit: one per k block of its slice (kb_count of them from kb0), three
  // times over with SPLIT3 (segment s = step / kb_count: 0 = A_lo * B_hi, 1 = A_hi * B_lo, 2 =
  // A_hi * B_hi).  Producer and consumers derive the same counts from the unit.
  constexpr int kSegments = SPLIT3 ? 3 : 1;
  // bz: the batch entry; sz: where the unit's output goes along the third dimension of map_c
  // (the batch entry, or with split k the partial's slice * batch + entry).
  auto tile_origin = [&](long long unit, int& m0, int& n0, int& bz, int& sz, int& kb0, int& kb_count) {
    const long long entry = unit / units_per_batch;
    bz = static_cast<int>(entry % g.batch);
    const int slice = static_cast<int>(entry / g.batch);
    sz = static_cast<int>(entry);
    kb0 = slice * g.kb_per_split;
    kb_count = max(0, min(g.kb_per_split, k_blocks - kb0));
    int um, tn;
    grouped_tile(static_cast<int>(unit % units_per_batch), units_m, g.tiles_n, g.group, um, tn);
    m0 = (um * CLUSTER + static_cast<int>(rank)) * BM;  // past m when tiles_m is odd: all zeros, nothing stored
    n0 = tn * BN;
  };

  if (warpgroup == 0) {  // producer
    hopper::setmaxnreg_dec<kWgmmaProducerRegs>();
    if (wg_thread == 0) {
      hopper::prefetch_tensor_map(&map_a);
      hopper::prefetch_tensor_map(&map_b);
      if constexpr (SPLIT3) {
        hopper::prefetch_tensor_map(&map_a_lo);
        hopper::prefetch_tensor_map(&map_b_lo);
      }
      unsigned it = 0;
      for (long long unit = first_unit; unit < total_units; unit += unit_step) {
        int m0, n0, bz, sz, kb0, kb_count;
        tile_origin(unit, m0, n0, bz, sz, kb0, kb_count);
        const int k_iters = kb_count * kSegments;
        for (int step = 0; step < k_iters; ++step, ++it) {
          const int seg = SPLIT3 ? step / kb_count : 0;
          const int kb = kb0 + (SPLIT3 ? step - seg * kb_count : step);
          const CUtensorMap* a_map = SPLIT3 && seg == 0 ? &map_a_lo : &map_a;
          const CUtensorMap* b_map = SPLIT3 && seg == 1 ? &map_b_lo : &map_b;
          const int stage = static_cast<int>(it % STAGES);
          hopper::mbarrier_wait(&empty_bar[stage], ((it / STAGES) & 1) ^ 1);
          unsigned char* a_tile = smem + stage * kStageBytes;
          unsigned char* b_tile = a_tile + kABytes;
          hopper::mbarrier_arrive_expect_tx(&full_bar[stage], kStageBytes);
          wgmma_detail::load_operand<A_MN, BM, BK>(a_tile, a_map, &full_bar[stage], kb * BK, m0, bz, g.a_batched);
          if constexpr (CLUSTER > 1) {  // this block's BN / CLUSTER rows of B, to every block
            constexpr std::uint16_t kAll = (1u << CLUSTER) - 1;
            unsigned char* b_part = b_tile + rank * (BN / CLUSTER) * 128;
            const int n_part = n0 + static_cast<int>(rank) * (BN / CLUSTER);
            if (g.b_batched)
              hopper::tma_load_3d_multicast(b_part, b_map, &full_bar[stage], kb * BK, n_part, bz, kAll);
            else
              hopper::tma_load_2d_multicast(b_part, b_map, &full_bar[stage], kb * BK, n_part, kAll);
          } else {
            wgmma_detail::load_operand<B_MN, BN, BK>(b_tile, b_map, &full_bar[stage], kb * BK, n0, bz, g.b_batched);
          }
        }
      }
    }
  } else {  // consumer warpgroup `warpgroup - 1`
    hopper::setmaxnreg_inc<kWgmmaConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int warp = wg_thread / 32, lane = wg_thread % 32;
    float acc[kMIters][BN / 2];
    const int wg_row0 = PINGPONG ? 0 : consumer * kWgRows;
    // A stage is free once every block's readers are done with it (the next multicast writes all).
    auto release = [&](int stage) {
      if constexpr (CLUSTER > 1) {
#pragma unroll
        for (unsigned r = 0; r < CLUSTER; ++r) hopper::mbarrier_arrive_cluster(&empty_bar[stage], r);
      } else {
        hopper::mbarrier_arrive(&empty_bar[stage]);
      }
    };
    unsigned char* epi = smem + STAGES * kStageBytes + consumer * 2 * kWgmmaEpilogueChunkBytes;
    unsigned epi_count = 0;  // chunks this consumer has stored (alternating buffers)
    unsigned it = 0;
    long long turn = 0;  // this block's tile count so far
    for (long long unit = first_unit; unit < total_units; unit += unit_step, ++turn) {
      int m0, n0, bz, sz, kb0, kb_count;
      tile_origin(unit, m0, n0, bz, sz, kb0, kb_count);
      const int k_iters = kb_count * kSegments;
      if (PINGPONG && turn % CONSUMERS != consumer) {  // the other consumer's tile: skip its stages
        it += k_iters;
        continue;
      }
      if (PINGPONG && turn > 0) {  // the previous turn's consumer has received all its stages
        const int prev = (consumer + CONSUMERS - 1) % CONSUMERS;
        hopper::mbarrier_wait(&turn_bar[prev], static_cast<unsigned>((turn - 1) / CONSUMERS) & 1);
      }
#pragma unroll
      for (int i = 0; i < kMIters; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[i][j] = 0.0f;
      int prev_stage = -1;
      for (int step = 0; step < k_iters; ++step, ++it) {
        const int stage = static_cast<int>(it % STAGES);
        hopper::mbarrier_wait(&full_bar[stage], (it / STAGES) & 1);
        const unsigned char* a_tile = smem + stage * kStageBytes + wg_row0 * 128;
        const unsigned char* b_tile = smem + stage * kStageBytes + kABytes;
        // One k step (16 16-bit or 8 tf32 elements) is 32 bytes along a K-major swizzled row (+2
        // in the descriptor's 16-byte units) or 16 rows of 128 bytes of an MN-major tile (+128).
        constexpr int kAStep = A_MN ? 16 * 128 / 16 : 2, kBStep = B_MN ? 16 * 128 / 16 : 2;
        auto desc = [](const unsigned char* tile, bool mn) {
          return mn ? hopper::smem_desc_mn_major_sw128(tile, BK) : hopper::smem_desc_k_major_sw128(tile);
        };
        const std::uint64_t desc_b = desc(b_tile, B_MN);
        hopper::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kKSteps; ++ks) {
#pragma unroll
          for (int i = 0; i < kMIters; ++i) {
            const std::uint64_t desc_a = desc(a_tile + i * 64 * 128, A_MN) + kAStep * ks;
            wgmma_detail::mma_step<BF16, TF32, BN, A_MN ? 1 : 0, B_MN ? 1 : 0>(acc[i], desc_a, desc_b + kBStep * ks);
          }
        }
        hopper::wgmma_commit();
        hopper::wgmma_wait<1>();  // the previous k block's wgmmas have retired: release its buffer
        if (prev_stage >= 0 && wg_thread == 0) release(prev_stage);
        prev_stage = stage;
      }
      if (PINGPONG && wg_thread == 0) hopper::mbarrier_arrive(&turn_bar[consumer]);
      hopper::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kMIters; ++i) hopper::fence_registers(acc[i]);
      if (prev_stage >= 0 && wg_thread == 0) release(prev_stage);

      const long long c_off = static_cast<long long>(bz) * g.stride_c;
      if (g.c_tma) {
        if (!TF32 && g.c_half)  // TF32 stores f32 only
          store_tile_tma_impl<true, BF16, kMIters, BN>(acc, epi, epi_count, m0 + wg_row0, n0, sz, g, &map_c, warp, lane, wg_thread, consumer);
        else
          store_tile_tma_impl<false, BF16, kMIters, BN>(acc, epi, epi_count, m0 + wg_row0, n0, sz, g, &map_c, warp, lane, wg_thread, consumer);
        continue;
      }
      // Accumulator layout of m64nN: warp w holds rows 16 w + lane / 4 (+8); element 4 j + 2 h + e
      // is column 8 j + 2 (lane % 4) + e of row + 8 h.
#pragma unroll
      for (int i = 0; i < kMIters; ++i) {
        const int row = m0 + wg_row0 + i * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = n0 + j * 8 + 2 * (lane % 4);
          wgmma_detail::store_pair<BF16>(g, c_off, row, col, acc[i][4 * j], acc[i][4 * j + 1]);
          wgmma_detail::store_pair<BF16>(g, c_off, row + 8, col, acc[i][4 * j + 2], acc[i][4 * j + 3]);
        }
      }
    }
    if (g.c_tma && wg_thread == 0) hopper::bulk_wait<0>();  // the last stores have landed
  }
  // No block leaves while its peer may still arrive on its barriers or multicast into it.
  if constexpr (CLUSTER > 1) {
    __syncwarp();  // the producer warp's lanes meet again before the aligned cluster barrier
    hopper::cluster_sync();
  }
#else
  __trap();  // built without sm_90a features; supports() declines every other device
#endif
}

}  // namespace kiln::gemm
