// TF32 tensor-core gemm: mma.sync.aligned.m16n8k8 (plain sm_80 PTX, also valid on sm_90) fed by a
// cp.async multistage pipeline.
//
//  - Each block computes BM x BN of C with (BM/WM) x (BN/WN) warps; a warp owns WM x WN, i.e.
//    (WM/16) x (WN/8) mma tiles, and keeps their accumulators in registers (fp32).
//  - STAGES shared-memory buffers: tile t+STAGES-1 is in flight (cp.async, 16 bytes per copy)
//    while tile t is multiplied; one cp.async.wait_group + __syncthreads per k-step.
//  - Shared tiles are stored as in global memory (A: BM rows of BK; B: BK rows of BN) with rows
//    padded by 4 (A) and 8 (B) floats, which makes the fragment loads conflict-free.
//  - Operands are rounded to TF32 (cvt.rna) when loaded into fragments; accumulation is fp32.
//    With SPLIT3 (the gemm_3xtf32_mma variant) each operand becomes big + small TF32 parts and
//    three mma per tile, summed per k-step in a fresh accumulator, recover fp32 accuracy.
//  - Edges: a copy that reaches past the matrix reads only the bytes inside it and zero-fills
//    the rest (cp.async src-size), so k and n need not be multiples of 4; stores are guarded.
//    Rows must start 16-byte aligned (pointers and row pitches), checked by supports().
// Kernel bodies read only their template parameters and the launch arguments.
#pragma once
#include <cstdint>

#include "gemm_common.cuh"
#include "gemm_cp_async.cuh"

namespace kiln::gemm {

__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// d = a * b + d for one 16x8x8 tile (row-major A fragment, column-major B fragment).
__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const std::uint32_t (&a)[4],
                                                const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d = a * b for one 16x8x8 tile (a fresh accumulator: C is zero).
__device__ __forceinline__ void mma_tf32_16x8x8_zero(float (&d)[4], const std::uint32_t (&a)[4],
                                                     const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

// Splits x into a TF32 "big" part and the TF32 rounding of the residual x - big (exact in fp32):
// big + small carries about 21 mantissa bits, which is what makes 3xTF32 fp32-accurate.
__device__ __forceinline__ void split_tf32(float x, std::uint32_t& big, std::uint32_t& small) {
  big = to_tf32(x);
  small = to_tf32(x - __uint_as_float(big));
}

// Blocks per SM requested from the compiler: 2 (at most 128 registers per thread) while a warp's
// accumulators fit that, 1 for 64 x 64 warp tiles (128 accumulators per thread).
constexpr int tf32_mma_min_blocks(int wm, int wn) { return wm * wn >= 64 * 64 ? 1 : 2; }

// SPLIT3 = false: plain TF32 (operands rounded to TF32).  SPLIT3 = true: 3xTF32, each operand split
// into big + small (split_tf32); per 8-deep k-step and mma tile, t = a_small*b_big + a_big*b_small +
// a_big*b_big (small terms first) in a fresh accumulator, then acc += t with an ordinary fp32 add.
// The fresh accumulator matters: the tensor cores add into C with truncation, which over k = 4096
// (1536 mma into one accumulator) measured 2.9e-5 relative error; adding t in software keeps the
// error at fp32-SIMT level.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool SPLIT3>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), tf32_mma_min_blocks(WM, WN))
    gemm_tf32_mma_kernel(GemmArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kWarpsN = BN / WN;
  constexpr int kThreads = 32 * (BM / WM) * kWarpsN;
  constexpr int kMTiles = WM / 16, kNTiles = WN / 8;
  constexpr int kALd = BK + 4, kBLd = BN + 8;
  constexpr int kAStage = BM * kALd, kBStage = BK * kBLd;
  constexpr int kAChunks = BM * BK / 4, kBChunks = BK * BN / 4;  // 16-byte copies per tile
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "whole mma tiles");
  static_assert(kAChunks % kThreads == 0 && kBChunks % kThreads == 0, "copies divide evenly");
  static_assert(STAGES >= 2, "a pipeline needs two stages");

  extern __shared__ __align__(16) float smem[];
  float* as = smem;                     // [STAGES][BM][kALd]
  float* bs = smem + STAGES * kAStage;  // [STAGES][BK][kBLd]

  const int tiles_m = (g.m + BM - 1) / BM;
  const int tiles_n = (g.n + BN - 1) / BN;
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8, tile_m, tile_n);
  const int m0 = tile_m * BM;
  const int n0 = tile_n * BN;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5, lane = tid & 31;
  const int wm0 = (warp / kWarpsN) * WM;  // warp tile origin within the block tile
  const int wn0 = (warp % kWarpsN) * WN;
  const int gid = lane >> 2, tig = lane & 3;  // mma fragment coordinates

  auto load_stage = [&](int stage, int k0) {
    float* a_dst = as + stage * kAStage;
    float* b_dst = bs + stage * kBStage;
#pragma unroll
    for (int l = 0; l < kAChunks / kThreads; ++l) {
      const int c = tid + l * kThreads;
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int grow = m0 + r, gk = k0 + kc;
      const float* src = g.a;
      int bytes = 0;
      if (grow < g.m && gk < g.k) {
        src = g.a + static_cast<long long>(grow) * g.lda + gk;
        bytes = min(4, g.k - gk) * 4;
      }
      cp_async_chunk4(a_dst + r * kALd + kc, src, bytes / 4);
    }
#pragma unroll
    for (int l = 0; l < kBChunks / kThreads; ++l) {
      const int c = tid + l * kThreads;
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      const int gk = k0 + r, gcol = n0 + nc;
      const float* src = g.b;
      int bytes = 0;
      if (gk < g.k && gcol < g.n) {
        src = g.b + static_cast<long long>(gk) * g.ldb + gcol;
        bytes = min(4, g.n - gcol) * 4;
      }
      cp_async_chunk4(b_dst + r * kBLd + nc, src, bytes / 4);
    }
  };

  float acc[kMTiles][kNTiles][4];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  auto compute_stage = [&](int stage) {
    const float* a_src = as + stage * kAStage;
    const float* b_src = bs + stage * kBStage;
    // Fully unrolled, BK = 32 spills at the 128-register cap; the 3xTF32 body spills even at 2.
    constexpr int kKsUnroll = SPLIT3 ? 1 : 2;
#pragma unroll kKsUnroll
    for (int ks = 0; ks < BK; ks += 8) {
      if constexpr (!SPLIT3) {
        std::uint32_t af[kMTiles][4];
        std::uint32_t bf[kNTiles][2];
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          const float* p = a_src + (wm0 + i * 16 + gid) * kALd + ks + tig;
          af[i][0] = to_tf32(p[0]);             // (row gid,     k tig)
          af[i][1] = to_tf32(p[8 * kALd]);      // (row gid + 8, k tig)
          af[i][2] = to_tf32(p[4]);             // (row gid,     k tig + 4)
          af[i][3] = to_tf32(p[8 * kALd + 4]);  // (row gid + 8, k tig + 4)
        }
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          const float* p = b_src + (ks + tig) * kBLd + wn0 + j * 8 + gid;
          bf[j][0] = to_tf32(p[0]);         // (k tig,     col gid)
          bf[j][1] = to_tf32(p[4 * kBLd]);  // (k tig + 4, col gid)
        }
#pragma unroll
        for (int i = 0; i < kMTiles; ++i)
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) mma_tf32_16x8x8(acc[i][j], af[i], bf[j]);
      } else {
        // All B fragments split once per k-step, A fragments one mma row at a time (registers).
        std::uint32_t b_big[kNTiles][2], b_small[kNTiles][2];
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          const float* p = b_src + (ks + tig) * kBLd + wn0 + j * 8 + gid;
          split_tf32(p[0], b_big[j][0], b_small[j][0]);
          split_tf32(p[4 * kBLd], b_big[j][1], b_small[j][1]);
        }
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          const float* p = a_src + (wm0 + i * 16 + gid) * kALd + ks + tig;
          std::uint32_t a_big[4], a_small[4];
          split_tf32(p[0], a_big[0], a_small[0]);
          split_tf32(p[8 * kALd], a_big[1], a_small[1]);
          split_tf32(p[4], a_big[2], a_small[2]);
          split_tf32(p[8 * kALd + 4], a_big[3], a_small[3]);
#pragma unroll
          for (int j = 0; j < kNTiles; ++j) {
            // Not IEEE for non-finite inputs: an infinite big part meets the other operand's
            // residual (inf * 0, inf - inf).  Masking it cost half the speed (spills), so the
            // variant is opt-in (allow_tf32=2) instead.
            float t[4];
            mma_tf32_16x8x8_zero(t, a_small, b_big[j]);
            mma_tf32_16x8x8(t, a_big, b_small[j]);
            mma_tf32_16x8x8(t, a_big, b_big[j]);
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] += t[q];
          }
        }
      }
    }
  };

  // Pipeline: STAGES-1 tiles in flight before the first multiply.  A group is committed every
  // step (empty ones too) so that wait_group<STAGES-2> always means "tile t has landed".  The
  // barrier after the wait also proves every warp finished step t-1, whose stage is refilled next.
  const int k_tiles = (g.k + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * BK);
    cp_async_commit();
  }
  for (int t = 0; t < k_tiles; ++t) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = t + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next * BK);
    cp_async_commit();
    compute_stage(t % STAGES);
  }
  cp_async_wait<0>();

  // Epilogue: accumulator (row gid [+8], cols 2*tig, 2*tig+1) of each mma tile.
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      const int col = n0 + wn0 + j * 8 + 2 * tig;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + i * 16 + gid + 8 * h;
        if (row >= g.m || col >= g.n) continue;
        float* p = g.c + static_cast<long long>(row) * g.ldc + col;
        float v0 = g.alpha * acc[i][j][2 * h];
        float v1 = g.alpha * acc[i][j][2 * h + 1];
        if (col + 1 < g.n) {
          float2* p2 = reinterpret_cast<float2*>(p);  // col is even and rows are 16-byte aligned
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
  }
#else
  __trap();  // built for an architecture without TF32 mma; supports() rejects cc < 8.0
#endif
}

}  // namespace kiln::gemm
