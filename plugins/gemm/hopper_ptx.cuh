// Hopper (sm_90 / sm_90a) building blocks as inline PTX, for gemm_wgmma.cuh: mbarriers, TMA tensor
// loads, the wgmma fences and shared-memory matrix descriptors, setmaxnreg.  Facts from the PTX
// ISA chapters on mbarrier, cp.async.bulk.tensor, wgmma and setmaxnreg.
#pragma once
#include <cuda.h>  // CUtensorMap (a type only: nothing here calls the driver)

#include <cstdint>

namespace kiln::gemm::hopper {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier -------------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals));
}
// Makes the initialised barriers visible to the async proxy (TMA) before first use.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// One arrival that also announces `bytes` of transactions (the TMA copies that complete on it).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Waits until the phase with parity `parity` has completed.  A fresh barrier is in phase 0, so
// waiting on parity 1 returns at once (the "previous" phase counts as completed).
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// --- clusters ---

__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster: orders what came before (barrier initialisation,
// the last arrivals) before what comes after in any block of the cluster.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Arrives on the mbarrier at the same shared-memory offset as `bar` in block `rank` of the cluster,
// with the instruction's default semantics (release at CTA scope).  What the arrival orders is the
// consumers' wgmma reads of a stage, which wgmma.wait_group has already completed; the first
// version's `.release.cluster` made every release a cluster-scope fence on the consumers' path
// (a suspect for the cluster kernel's slowness, measured in the plugin README).
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint64_t* bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(rank)
      : "memory");
}

// --- TMA ------------------------------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}
// Copies the box at (c0, c1[, c2]) of `map` into shared memory at `dst`; completes `bytes` on
// `bar`.  Elements outside the tensor arrive as zeros (and still count as transferred bytes).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::
          "r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Copies the box at (c0, c1[, c2]) of `map` from shared memory at `src` to global memory (elements
// outside the tensor are not written), in this thread's current bulk group.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's bulk groups are incomplete (their writes done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's ordinary shared-memory writes visible to the async proxy (a TMA store).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier among `threads` threads (a multiple of 32) on hardware barrier `id` (0 is __syncthreads).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// tma_load_2d / 3d delivered to the same shared-memory offset of every block in `mask` (bit i:
// cluster rank i), completing the bytes on the mbarrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0,
                                                      int c1, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4}], [%2], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0,
                                                      int c1, int c2, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4, %5}], [%2], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
      : "memory");
}

// --- wgmma ----------------------------------------------------------------------------------

// Orders register and shared-memory accesses before the following wgmma.mma_async.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed wgmma groups of this thread are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses to accumulator registers across a wgmma wait.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor of a K-major tile written by TMA with 128-byte swizzling: rows
// of 128 bytes, 16-byte chunks XOR-ed with (row % 8), groups of 8 rows 1024 bytes apart (the
// stride byte offset); the leading byte offset is unused in this mode (1 by convention).  The
// tile must start 1024-byte aligned; a k step inside the 128-byte row adds its byte offset / 16
// to the start address (the hardware applies the swizzle to the full address).
__device__ __forceinline__ std::uint64_t smem_desc_k_major_sw128(const void* tile) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((smem_addr(tile) & 0x3FFFF) >> 4);  // bits 0-13: start address / 16
  d |= static_cast<std::uint64_t>(1) << 16;                            // bits 16-29: leading byte offset / 16
  d |= static_cast<std::uint64_t>(1024 >> 4) << 32;                    // bits 32-45: stride byte offset / 16
  d |= static_cast<std::uint64_t>(1) << 62;                            // bits 62-63: 1 = 128-byte swizzle
  return d;
}

// Shared-memory matrix descriptor of an MN-major 16-bit tile (A column-major or B row-major: M or
// N contiguous in memory) written by TMA with 128-byte swizzling, as boxes of 64 m / n elements
// (128 bytes, the swizzle span) x `k_rows` k rows, box j at `tile + j * k_rows * 128`.
//
// LBO / SBO, from the PTX ISA ("Shared memory matrix layout": "Strides" and "Canonical layouts"):
// in 16-byte units (T = 8 16-bit elements) the MN-major 128-byte-swizzled canonical layout is
//   Swizzle<3,4,3> o ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
// i.e. along M / N: 8 elements in a 16-byte chunk, 8 chunks make one 128-byte row (64 elements),
// and the next 64 elements start LBO bytes on ("leading byte offset, MN-major swizzled: from the
// first swizzle-byte-size / 16 rows to the next"); along K: 8 rows of 128 bytes (one 1024-byte
// swizzle atom), and the next 8 k rows start SBO bytes on ("stride byte offset, MN-major
// swizzled: from the first 8 columns to the next 8").  The ISA's own 64-byte example (bf16,
// ((8,4,2),(8,2)):((1,8,256),(32,512)) elements: LBO = 512 B, SBO = 1024 B) is this pattern at
// half the width.  Our TMA box of 64 elements x k_rows rows puts k row r at r * 128 bytes, so
//   SBO = 8 rows * 128 bytes = 1024;   LBO = one box = k_rows * 128 bytes (8192 for 64 k rows).
// Swizzle<3,4,3> on byte addresses XORs bits 4-6 (the 16-byte chunk) with bits 7-9 (the row within
// the 1024-byte atom): the same function TMA's 128-byte swizzle applies, whatever the majorness.
// A k16 step is 16 k rows = 2048 bytes further (+128 in the start address field): a multiple of
// the 1024-byte atom, so the base offset stays 0.  The tile must start 1024-byte aligned.
__device__ __forceinline__ std::uint64_t smem_desc_mn_major_sw128(const void* tile, std::uint32_t k_rows) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((smem_addr(tile) & 0x3FFFF) >> 4);  // bits 0-13: start address / 16
  d |= static_cast<std::uint64_t>((k_rows * 128) >> 4) << 16;          // bits 16-29: LBO / 16 (next 64 m / n)
  d |= static_cast<std::uint64_t>(1024 >> 4) << 32;                    // bits 32-45: SBO / 16 (next 8 k rows)
  d |= static_cast<std::uint64_t>(1) << 62;                            // bits 62-63: 1 = 128-byte swizzle
  return d;
}

// --- registers ------------------------------------------------------------------------------

// Moves registers between warpgroups: the producer gives up what it does not need, the consumers
// take it for their accumulators.  Takes effect only with a register cap at entry
// (__launch_bounds__(threads, 1)).
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

}  // namespace kiln::gemm::hopper
