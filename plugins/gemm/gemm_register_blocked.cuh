// Register-blocked SIMT SGEMM: each block computes a BM x BN tile of C, each thread a TM x TN
// register tile, stepping through k BK at a time.
//
//  - Global -> shared: A and B tiles are read with VEC-wide loads (float4 when VEC == 4) into
//    registers while the current tile is being computed, then stored into the other of two
//    shared-memory buffers: one __syncthreads per k-step.
//  - A is stored transposed (as[k][m]) so that both operand fragments are read as float4; its
//    rows are padded by 4 floats so the transposing store is free of bank conflicts.
//  - A thread's TM x TN tile is (TM/4) x (TN/4) sub-tiles of 4 x 4, spaced 4 * (BM/TM) rows and
//    4 * (BN/TN) columns apart; a warp is 4 x 8 threads, so the 8 threads of each quarter-warp
//    read one contiguous 128-byte row of B (conflict-free) and one broadcast float4 of A.
//  - Edges: loads outside the matrix read zeros (a float4 only when all four lie inside, else
//    guarded scalars) and stores are guarded, so every m, n, k is correct.
//  - Blocks are numbered along groups of 8 tile rows (grouped_tile) for L2 reuse.
// Kernel bodies read only their template parameters and the launch arguments.
#pragma once
#include "gemm_common.cuh"
#include "gemm_cp_async.cuh"

namespace kiln::gemm {

// The thread layout shared by both register-blocked kernels: a warp is 4 x 8 threads; thread
// (ty, tx) owns (TM/4) x (TN/4) sub-tiles of 4 x 4, spaced 4 * (BM/TM) rows and 4 * (BN/TN) columns
// apart.
template <int BM, int BN, int TM, int TN>
__device__ __forceinline__ void rb_thread_coords(int tid, int& ty, int& tx) {
  constexpr int kThreadCols = BN / TN;
  const int lane = tid & 31, warp = tid >> 5;
  ty = (warp / (kThreadCols / 8)) * 4 + lane / 8;
  tx = (warp % (kThreadCols / 8)) * 8 + lane % 8;
}

// acc += the BK-deep product of one shared A^T tile (as[k][m], rows of ALD floats) and B tile
// (bs[k][n], rows of BN floats).  Each quarter-warp reads one broadcast float4 of A and one
// contiguous 128-byte row segment of B per sub-tile: conflict-free.
template <int BM, int BN, int BK, int TM, int TN, int ALD>
__device__ __forceinline__ void rb_compute(const float* as, const float* bs, int ty, int tx, float (&acc)[TM][TN]) {
  constexpr int kRowStep = 4 * (BM / TM);
  constexpr int kColStep = 4 * (BN / TN);
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM / 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(as + kk * ALD + i * kRowStep + ty * 4);
      a[4 * i + 0] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const float4 v = *reinterpret_cast<const float4*>(bs + kk * BN + j * kColStep + tx * 4);
      b[4 * j + 0] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// C = alpha * acc + beta * C for one thread's tile (C untouched by reads when beta == 0); float4
// stores when VEC == 4 and the four columns lie inside, else guarded scalars.
template <int BM, int BN, int TM, int TN, int VEC>
__device__ __forceinline__ void rb_epilogue(const GemmArgs& g, int m0, int n0, int ty, int tx,
                                            const float (&acc)[TM][TN]) {
  constexpr int kRowStep = 4 * (BM / TM);
  constexpr int kColStep = 4 * (BN / TN);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / 4) * kRowStep + ty * 4 + (i % 4);
    if (row >= g.m) continue;
    float* crow = g.c + static_cast<long long>(row) * g.ldc;
#pragma unroll
    for (int j4 = 0; j4 < TN / 4; ++j4) {
      const int col = n0 + j4 * kColStep + tx * 4;
      float v[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) v[q] = g.alpha * acc[i][4 * j4 + q];
      if constexpr (VEC == 4) {
        if (col + 3 < g.n) {
          float4* p = reinterpret_cast<float4*>(crow + col);
          if (g.beta != 0.0f) {
            const float4 old = *p;
            v[0] = fmaf(g.beta, old.x, v[0]);
            v[1] = fmaf(g.beta, old.y, v[1]);
            v[2] = fmaf(g.beta, old.z, v[2]);
            v[3] = fmaf(g.beta, old.w, v[3]);
          }
          *p = make_float4(v[0], v[1], v[2], v[3]);
          continue;
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (col + q < g.n) {
          float* p = crow + col + q;
          *p = g.beta == 0.0f ? v[q] : fmaf(g.beta, *p, v[q]);
        }
      }
    }
  }
}

// Blocks per SM requested from the compiler: caps registers at 128 per thread, which keeps two
// 256-thread blocks (16 warps) resident per SM.
constexpr int register_blocked_min_blocks(int threads) { return threads >= 512 ? 1 : 512 / threads; }

// kSplitK: this block computes the k slice blockIdx.y of the problem (gemm_split_k; GemmArgs).
// A template flag rather than a runtime test: the sliced copy of the arguments costs registers,
// which the 8 x 8-per-thread tiles do not have to spare (spills, 8% slower at 4096^3).
template <int BM, int BN, int BK, int TM, int TN, int VEC, bool kSplitK = false>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), register_blocked_min_blocks((BM / TM) * (BN / TN)))
    gemm_register_blocked_kernel(GemmArgs whole) {
  const GemmArgs g = kSplitK ? k_slice(whole) : whole;
  constexpr int kThreadRows = BM / TM;
  constexpr int kThreadCols = BN / TN;
  constexpr int kThreads = kThreadRows * kThreadCols;
  constexpr int kWarpRows = 4, kWarpCols = 8;  // a warp is 4 x 8 threads
  constexpr int kALd = BM + 4;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 sub-tiles");
  static_assert(kThreadRows % kWarpRows == 0 && kThreadCols % kWarpCols == 0, "warps of 4 x 8 threads");
  static_assert(kThreads % 32 == 0, "whole warps");
  static_assert(VEC == 1 || VEC == 4, "scalar or float4 loads");
  static_assert(BK % VEC == 0 && BN % VEC == 0, "tile rows hold whole vectors");

  // A vector load is VEC consecutive floats of one row; each thread stages kAIters of A's and
  // kBIters of B's per k-step (the last iteration is partial when the count does not divide).
  constexpr int kAVecs = BM * BK / VEC, kAPerRow = BK / VEC;
  constexpr int kBVecs = BK * BN / VEC, kBPerRow = BN / VEC;
  constexpr int kAIters = (kAVecs + kThreads - 1) / kThreads;
  constexpr int kBIters = (kBVecs + kThreads - 1) / kThreads;

  __shared__ __align__(16) float as[2][BK][kALd];
  __shared__ __align__(16) float bs[2][BK][BN];

  const int tiles_m = (g.m + BM - 1) / BM;
  const int tiles_n = (g.n + BN - 1) / BN;
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8, tile_m, tile_n);
  const int m0 = tile_m * BM;
  const int n0 = tile_n * BN;

  const int tid = static_cast<int>(threadIdx.x);
  int ty, tx;
  rb_thread_coords<BM, BN, TM, TN>(tid, ty, tx);

  float a_stage[kAIters][VEC];
  float b_stage[kBIters][VEC];

  auto load_tiles = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kAIters; ++l) {
      const int idx = tid + l * kThreads;
      if (kAVecs % kThreads == 0 || idx < kAVecs) {
        const int grow = m0 + idx / kAPerRow;
        const int gk = k0 + (idx % kAPerRow) * VEC;
        const float* src = g.a + static_cast<long long>(grow) * g.lda + gk;
        bool done = false;
        if constexpr (VEC == 4) {
          if (grow < g.m && gk + 3 < g.k) {
            const float4 v = *reinterpret_cast<const float4*>(src);
            a_stage[l][0] = v.x; a_stage[l][1] = v.y; a_stage[l][2] = v.z; a_stage[l][3] = v.w;
            done = true;
          }
        }
        if (!done) {
#pragma unroll
          for (int j = 0; j < VEC; ++j) a_stage[l][j] = (grow < g.m && gk + j < g.k) ? src[j] : 0.0f;
        }
      }
    }
#pragma unroll
    for (int l = 0; l < kBIters; ++l) {
      const int idx = tid + l * kThreads;
      if (kBVecs % kThreads == 0 || idx < kBVecs) {
        const int gk = k0 + idx / kBPerRow;
        const int gcol = n0 + (idx % kBPerRow) * VEC;
        const float* src = g.b + static_cast<long long>(gk) * g.ldb + gcol;
        bool done = false;
        if constexpr (VEC == 4) {
          if (gk < g.k && gcol + 3 < g.n) {
            const float4 v = *reinterpret_cast<const float4*>(src);
            b_stage[l][0] = v.x; b_stage[l][1] = v.y; b_stage[l][2] = v.z; b_stage[l][3] = v.w;
            done = true;
          }
        }
        if (!done) {
#pragma unroll
          for (int j = 0; j < VEC; ++j) b_stage[l][j] = (gk < g.k && gcol + j < g.n) ? src[j] : 0.0f;
        }
      }
    }
  };

  auto store_tiles = [&](int buf) {
#pragma unroll
    for (int l = 0; l < kAIters; ++l) {
      const int idx = tid + l * kThreads;
      if (kAVecs % kThreads == 0 || idx < kAVecs) {
        const int r = idx / kAPerRow;
        const int kc = (idx % kAPerRow) * VEC;
#pragma unroll
        for (int j = 0; j < VEC; ++j) as[buf][kc + j][r] = a_stage[l][j];
      }
    }
#pragma unroll
    for (int l = 0; l < kBIters; ++l) {
      const int idx = tid + l * kThreads;
      if (kBVecs % kThreads == 0 || idx < kBVecs) {
        const int r = idx / kBPerRow;
        const int c = (idx % kBPerRow) * VEC;
        if constexpr (VEC == 4) {
          *reinterpret_cast<float4*>(&bs[buf][r][c]) =
              make_float4(b_stage[l][0], b_stage[l][1], b_stage[l][2], b_stage[l][3]);
        } else {
          bs[buf][r][c] = b_stage[l][0];
        }
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  auto compute = [&](int buf) { rb_compute<BM, BN, BK, TM, TN, kALd>(&as[buf][0][0], &bs[buf][0][0], ty, tx, acc); };

  // Double buffering: while buffer t&1 is multiplied, tile t+1 travels global -> registers, and
  // lands in the other buffer afterwards.  That buffer was last read in step t-1, which every
  // thread finished before the barrier ending step t-1; one barrier per step suffices.
  const int k_tiles = (g.k + BK - 1) / BK;
  if (k_tiles > 0) {
    load_tiles(0);
    store_tiles(0);
  }
  __syncthreads();
  for (int t = 0; t < k_tiles; ++t) {
    const int buf = t & 1;
    const bool has_next = t + 1 < k_tiles;
    if (has_next) load_tiles((t + 1) * BK);
    compute(buf);
    if (has_next) store_tiles(buf ^ 1);
    __syncthreads();
  }

  rb_epilogue<BM, BN, TM, TN, VEC>(g, m0, n0, ty, tx, acc);
}

// The cp.async variant of the same kernel: STAGES shared-memory buffers filled straight from
// global memory (no register staging, so BK = 16 fits the 128-register cap), tile t+STAGES-1 in
// flight while tile t is multiplied, one cp.async.wait_group + __syncthreads per k-step.
//  - A is transposed on the way in with 4-byte copies: a warp copies 4 rows x 8 consecutive k
//    (32-byte global segments) into as[k][m], whose rows are padded by 4 floats, so the 32
//    stores hit 32 different banks.  Only 4-byte alignment is needed for A.
//  - B rows are copied as they are: 16-byte copies when VEC == 4 (16-byte aligned B), else 4-byte.
//  - Edges: copies outside the matrix read nothing and zero-fill (src-size), stores are guarded.
// Shared memory is dynamic (register_blocked_smem_bytes; above 48 KiB the launcher opts in).
template <int BM, int BN, int BK, int TM, int TN, int VEC, int STAGES>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), register_blocked_min_blocks((BM / TM) * (BN / TN)))
    gemm_register_blocked_async_kernel(GemmArgs g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kThreads = (BM / TM) * (BN / TN);
  constexpr int kALd = BM + 4;
  constexpr int kAStage = BK * kALd, kBStage = BK * BN;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 sub-tiles");
  static_assert((BM / TM) % 4 == 0 && (BN / TN) % 8 == 0, "warps of 4 x 8 threads");
  static_assert(BK % 8 == 0, "A is copied in runs of 8 k");
  static_assert(VEC == 1 || VEC == 4, "4- or 16-byte copies of B");
  static_assert(STAGES >= 2, "a pipeline needs two stages");
  // Copies per thread per tile; the counts divide evenly for every instantiated config.
  constexpr int kACopies = BM * BK, kBCopies = BK * BN / VEC;
  static_assert(kACopies % kThreads == 0 && kBCopies % kThreads == 0, "copies divide evenly");

  extern __shared__ __align__(16) float smem[];
  float* as = smem;                     // [STAGES][BK][kALd]
  float* bs = smem + STAGES * kAStage;  // [STAGES][BK][BN]

  const int tiles_m = (g.m + BM - 1) / BM;
  const int tiles_n = (g.n + BN - 1) / BN;
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8, tile_m, tile_n);
  const int m0 = tile_m * BM;
  const int n0 = tile_n * BN;
  const int tid = static_cast<int>(threadIdx.x);
  int ty, tx;
  rb_thread_coords<BM, BN, TM, TN>(tid, ty, tx);

  auto load_stage = [&](int stage, int k0) {
    float* a_dst = as + stage * kAStage;
    float* b_dst = bs + stage * kBStage;
#pragma unroll
    for (int l = 0; l < kACopies / kThreads; ++l) {
      // Element e: k = e % 8 + 8 * (e / (8 * BM)), row = (e / 8) % BM.
      const int e = tid + l * kThreads;
      const int kc = (e % 8) + 8 * (e / (8 * BM));
      const int r = (e / 8) % BM;
      const int grow = m0 + r, gk = k0 + kc;
      const bool inside = grow < g.m && gk < g.k;
      const float* src = inside ? g.a + static_cast<long long>(grow) * g.lda + gk : g.a;
      cp_async_float(a_dst + kc * kALd + r, src, inside);
    }
#pragma unroll
    for (int l = 0; l < kBCopies / kThreads; ++l) {
      const int c = tid + l * kThreads;
      const int r = c / (BN / VEC), nc = (c % (BN / VEC)) * VEC;
      const int gk = k0 + r, gcol = n0 + nc;
      const bool inside = gk < g.k && gcol < g.n;
      const float* src = inside ? g.b + static_cast<long long>(gk) * g.ldb + gcol : g.b;
      if constexpr (VEC == 4)
        cp_async_chunk4(b_dst + r * BN + nc, src, inside ? min(4, g.n - gcol) : 0);
      else
        cp_async_float(b_dst + r * BN + nc, src, inside);
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Pipeline as in gemm_tf32_mma: a group is committed every step (empty ones too), so
  // wait_group<STAGES-2> means "tile t has landed"; the barrier after it also proves every warp
  // finished step t-1, whose buffer is refilled next.
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
    const int stage = t % STAGES;
    rb_compute<BM, BN, BK, TM, TN, kALd>(as + stage * kAStage, bs + stage * kBStage, ty, tx, acc);
  }
  cp_async_wait<0>();

  rb_epilogue<BM, BN, TM, TN, VEC>(g, m0, n0, ty, tx, acc);
#else
  __trap();  // built for an architecture without cp.async; supports() rejects cc < 8.0
#endif
}

}  // namespace kiln::gemm
