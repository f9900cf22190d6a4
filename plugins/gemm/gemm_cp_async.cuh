// cp.async (sm_80+) helpers shared by the pipelined gemm kernels: global -> shared copies that
// bypass registers, grouped and waited on per pipeline stage.
#pragma once

namespace kiln::gemm {

// 16-byte global -> shared copy of which only `src_bytes` (0..16) are read; the rest is zeroed.
// Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
// 4-byte copy (src_bytes 0 zero-fills): lets a pipelined kernel transpose a tile on the way in.
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
// Copies the first `valid` (0..4) floats of a 16-byte chunk and zeroes the rest without reading
// past them: a full chunk is one 16-byte cp.async, a partial one per-element 4-byte copies, an
// empty one a plain shared store.  (A 16-byte cp.async with a smaller src-size is reported by
// compute-sanitizer as a 16-byte read, so edge chunks never use one.)
__device__ __forceinline__ void cp_async_chunk4(float* smem, const float* gmem, int valid) {
  if (valid >= 4) {
    cp_async_16(smem, gmem, 16);
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (e < valid)
      cp_async_4(smem + e, gmem + e, 4);
    else
      smem[e] = 0.0f;
  }
}
// One float, or a zero when the element lies outside the matrix.
__device__ __forceinline__ void cp_async_float(float* smem, const float* gmem, bool inside) {
  if (inside)
    cp_async_4(smem, gmem, 4);
  else
    *smem = 0.0f;
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace kiln::gemm
