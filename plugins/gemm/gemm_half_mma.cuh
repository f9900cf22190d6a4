// f16 / bf16 tensor-core gemm: mma.sync.aligned.m16n8k16 with f32 accumulation (plain sm_80 PTX,
// also valid on sm_90), fed by a cp.async multistage pipeline; the same structure as the TF32
// kernel (gemm_tf32_mma.cuh).
//
//  - A is row-major; B row-major (B_COL = false) or column-major (B_COL = true: a transposed
//    weight, Y = X * W^T).  Shared tiles are stored as in global memory with rows padded by 8
//    halves (16 bytes), which keeps every row 16-byte aligned and makes the ldmatrix reads of
//    eight rows hit eight distinct bank groups.  Fragments come from ldmatrix.x4: one per 16 x 16
//    A tile, one per two 8-column B tiles (.trans for a row-major B, whose k runs down the rows).
//  - C is f32 or the input type (a runtime flag: the epilogue is not the hot loop), with alpha
//    and beta in f32; beta == 0 never reads C.
//  - Batches: blockIdx.y is the batch entry; batch strides of 0 broadcast A or B.
//  - Edges: full 16-byte chunks inside the matrix are cp.async copies; a chunk that crosses the
//    edge is read element by element with ordinary loads and zero-filled (so compute-sanitizer
//    sees no read past the matrix); stores are guarded.  Pointers, row pitches and batch strides
//    must be 16-byte aligned (supports() checks the problem's alignment class).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gemm_common.cuh"
#include "gemm_cp_async.cuh"

namespace kiln::gemm {

// What one launch of the kernel reads; built by launch_half_mma from HalfGemmArgs.
struct HalfKernelArgs {
  const std::uint16_t* a;
  const std::uint16_t* b;
  void* c;
  int m, n, k;
  long long lda, ldb, ldc;
  long long stride_a, stride_b, stride_c;
  float alpha, beta;
  int c_half;
};

template <bool BF16>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  if constexpr (BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <bool BF16>
__device__ __forceinline__ float half_load(const void* p) {
  if constexpr (BF16)
    return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
  else
    return __half2float(*static_cast<const __half*>(p));
}

template <bool BF16>
__device__ __forceinline__ std::uint16_t half_bits(float v) {
  if constexpr (BF16)
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else
    return __half_as_ushort(__float2half_rn(v));
}

// Copies 8 halves (16 bytes) of one row starting at element `col` of a row with `valid_cols`
// elements: cp.async when all 8 lie inside, element-wise otherwise, zeros past the edge.
__device__ __forceinline__ void copy_chunk8(std::uint16_t* smem, const std::uint16_t* row, int col, int valid_cols,
                                            bool row_inside) {
  if (row_inside && col + 8 <= valid_cols) {
    cp_async_16(smem, row + col, 16);
    return;
  }
  std::uint16_t v[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = (row_inside && col + e < valid_cols) ? row[col + e] : std::uint16_t{0};
  uint4 packed;
  packed.x = v[0] | (static_cast<unsigned>(v[1]) << 16);
  packed.y = v[2] | (static_cast<unsigned>(v[3]) << 16);
  packed.z = v[4] | (static_cast<unsigned>(v[5]) << 16);
  packed.w = v[6] | (static_cast<unsigned>(v[7]) << 16);
  *reinterpret_cast<uint4*>(smem) = packed;
}

// Four 8 x 8 matrices of 16-bit elements from shared memory; lane l gives the address of row
// l % 8 of matrix l / 8 (16-byte aligned).  Thread t receives (row t / 4, cols 2 (t % 4), +1) of
// each, or with .trans (rows 2 (t % 4), +1 of col t / 4): the mma fragment layouts.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem_row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem_row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

constexpr int half_mma_min_blocks(int wm, int wn) { return wm * wn >= 64 * 64 ? 1 : 2; }

template <bool BF16, bool B_COL, int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), half_mma_min_blocks(WM, WN))
    gemm_half_mma_kernel(HalfKernelArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kWarpsN = BN / WN;
  constexpr int kThreads = 32 * (BM / WM) * kWarpsN;
  constexpr int kMTiles = WM / 16, kNTiles = WN / 8;
  constexpr int kALd = BK + 8;
  constexpr int kBLd = B_COL ? BK + 8 : BN + 8;
  constexpr int kAStage = BM * kALd;
  constexpr int kBStage = B_COL ? BN * kBLd : BK * kBLd;
  constexpr int kAChunks = BM * BK / 8, kBChunks = BK * BN / 8;  // 16-byte copies per tile
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole mma tiles, B tiles in pairs (ldmatrix.x4)");
  static_assert(kAChunks % kThreads == 0 && kBChunks % kThreads == 0, "copies divide evenly");
  static_assert(STAGES >= 2, "a pipeline needs two stages");

  extern __shared__ __align__(16) std::uint16_t smem_h[];
  std::uint16_t* as = smem_h;                     // [STAGES][BM][kALd]
  std::uint16_t* bs = smem_h + STAGES * kAStage;  // [STAGES][BK][kBLd] or [STAGES][BN][kBLd]

  const std::uint16_t* ga = g.a + static_cast<long long>(blockIdx.y) * g.stride_a;
  const std::uint16_t* gb = g.b + static_cast<long long>(blockIdx.y) * g.stride_b;

  const int tiles_m = (g.m + BM - 1) / BM;
  const int tiles_n = (g.n + BN - 1) / BN;
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8, tile_m, tile_n);
  const int m0 = tile_m * BM;
  const int n0 = tile_n * BN;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5, lane = tid & 31;
  const int wm0 = (warp / kWarpsN) * WM;
  const int wn0 = (warp % kWarpsN) * WN;
  const int gid = lane >> 2, tig = lane & 3;

  auto load_stage = [&](int stage, int k0) {
    std::uint16_t* a_dst = as + stage * kAStage;
    std::uint16_t* b_dst = bs + stage * kBStage;
#pragma unroll
    for (int l = 0; l < kAChunks / kThreads; ++l) {
      const int c = tid + l * kThreads;
      const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      const bool inside = m0 + r < g.m;
      copy_chunk8(a_dst + r * kALd + kc, ga + (inside ? static_cast<long long>(m0 + r) * g.lda : 0), k0 + kc, g.k,
                  inside);
    }
#pragma unroll
    for (int l = 0; l < kBChunks / kThreads; ++l) {
      const int c = tid + l * kThreads;
      if constexpr (B_COL) {  // B stored as n rows of k: chunks run along k
        const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
        const bool inside = n0 + r < g.n;
        copy_chunk8(b_dst + r * kBLd + kc, gb + (inside ? static_cast<long long>(n0 + r) * g.ldb : 0), k0 + kc, g.k,
                    inside);
      } else {  // B stored as k rows of n: chunks run along n
        const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
        const bool inside = k0 + r < g.k;
        copy_chunk8(b_dst + r * kBLd + nc, gb + (inside ? static_cast<long long>(k0 + r) * g.ldb : 0), n0 + nc, g.n,
                    inside);
      }
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
    const std::uint16_t* a_src = as + stage * kAStage;
    const std::uint16_t* b_src = bs + stage * kBStage;
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      std::uint32_t af[kMTiles][4];
      std::uint32_t bf[kNTiles][2];
      // A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
      // are a0..a3 of the m16n8k16 fragment.
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
        ldmatrix_x4(af[i], a_src + (wm0 + i * 16 + (lane & 15)) * kALd + ks + (lane >> 4) * 8);
      // B, two 8-column tiles at a time: matrices (tile j, k 0-7), (tile j, k 8-15), (tile j + 1,
      // k 0-7), (tile j + 1, k 8-15) are b0, b1 of tile j and of tile j + 1.
#pragma unroll
      for (int j = 0; j < kNTiles; j += 2) {
        std::uint32_t r[4];
        if constexpr (B_COL)
          ldmatrix_x4(r, b_src + (wn0 + j * 8 + (lane & 7) + (lane >> 4) * 8) * kBLd + ks + ((lane >> 3) & 1) * 8);
        else
          ldmatrix_x4_trans(r, b_src + (ks + (lane & 7) + ((lane >> 3) & 1) * 8) * kBLd + wn0 + j * 8 + (lane >> 4) * 8);
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) mma_16x8x16<BF16>(acc[i][j], af[i], bf[j]);
    }
  };

  // Pipeline as in gemm_tf32_mma_kernel: STAGES-1 tiles in flight, one group committed per step.
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

  // Epilogue: accumulator (row gid [+8], cols 2*tig, 2*tig+1) of each mma tile.  Pairs are
  // stored together: col is even and row pitches are 16-byte aligned.
  const long long c_off = static_cast<long long>(blockIdx.y) * g.stride_c;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      const int col = n0 + wn0 + j * 8 + 2 * tig;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + i * 16 + gid + 8 * h;
        if (row >= g.m || col >= g.n) continue;
        const long long at = c_off + static_cast<long long>(row) * g.ldc + col;
        const bool pair = col + 1 < g.n;
        float v0 = g.alpha * acc[i][j][2 * h];
        float v1 = g.alpha * acc[i][j][2 * h + 1];
        if (g.c_half) {
          std::uint16_t* p = static_cast<std::uint16_t*>(g.c) + at;
          if (g.beta != 0.0f) {
            v0 = fmaf(g.beta, half_load<BF16>(p), v0);
            if (pair) v1 = fmaf(g.beta, half_load<BF16>(p + 1), v1);
          }
          if (pair)
            *reinterpret_cast<std::uint32_t*>(p) = half_bits<BF16>(v0) | (static_cast<std::uint32_t>(half_bits<BF16>(v1)) << 16);
          else
            *p = half_bits<BF16>(v0);
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
    }
  }
#else
  __trap();  // built for an architecture without f16/bf16 mma; supports() rejects cc < 8.0
#endif
}

}  // namespace kiln::gemm
