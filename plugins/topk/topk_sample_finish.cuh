// The second half of topk_sample_select, shared with topk_grid_select: once a row's candidate
// buffer holds every key at or above its threshold (SampleRowState: threshold, count, best), the
// select kernel orders them and writes the first k, and topk_radix_select's passes (one
// cooperative launch) and sort take the rows whose candidates missed the answer (fewer than k,
// or more than the buffer holds).  Three launches; with no failed row the last two return at once.
//
//   if (cudaError_t e = launch_sample_finish<T>(l, bufs, stream); e != cudaSuccess) return e;
#pragma once
#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

#include "topk_params.hpp"
#include "topk_resident_grid.hpp"
#include "topk_sample_select.cuh"
#include "topk_sample_select_params.hpp"
#include "topk_variants.hpp"

namespace kiln::topk {

// The workspace the select kernel and the fallback read and write.  cands holds rows x cand_cap
// keys and is reused as the fallback's selection buffers (rows x fallback_cap): cand_cap >=
// fallback_cap.
struct SampleFinishBuffers {
  SampleRowState* states = nullptr;
  std::uint32_t* failed = nullptr;  // rows + 1 words: the count of failed rows, then their indices
  RadixRowState* radix_states = nullptr;
  std::uint32_t* hists = nullptr;   // rows x kRadixBins
  std::uint64_t* cands = nullptr;
  std::int64_t cand_cap = 0;
  int fallback_cap = 0;
  Chunking fallback;                // the fallback passes' chunks of a row
};

template <class T>
cudaError_t launch_sample_finish(const TopkLaunch& l, const SampleFinishBuffers& b, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(l.x);
  const unsigned rows = unsigned(l.rows);
  if (l.rows <= kSampleSelectWideRows)
    sample_select_kernel<T, kSampleSelectWideBlock><<<rows, kSampleSelectWideBlock, 0, stream>>>(
        x, l.x_stride, l.n, l.k, b.cand_cap, b.states, b.cands, b.radix_states, b.hists, b.failed,
        static_cast<T*>(l.values), l.v_stride, l.indices, l.i_stride);
  else
    sample_select_kernel<T, kSampleSelectBlock><<<rows, kSampleSelectBlock, 0, stream>>>(
        x, l.x_stride, l.n, l.k, b.cand_cap, b.states, b.cands, b.radix_states, b.hists, b.failed,
        static_cast<T*>(l.values), l.v_stride, l.indices, l.i_stride);
  // The fallback: queued always (no host sync); with no failed row both launches are small grids
  // that return at once.
  constexpr int FB = kSampleFallbackTile.block, FI = kSampleFallbackTile.items;
  const std::uint32_t* failed = b.failed;
  int cap = b.fallback_cap;
  int chunks = int(b.fallback.chunks);
  std::int64_t n = l.n, x_stride = l.x_stride;
  int k = l.k, largest = l.largest;
  std::int64_t chunk_len = b.fallback.chunk_len;
  RadixRowState* radix_states = b.radix_states;
  std::uint32_t* hists = b.hists;
  std::uint64_t* cands = b.cands;
  auto* passes = &sample_fallback_passes_kernel<T, FB, FI>;
  // A cooperative launch needs every block resident: at most kSampleFallbackGrid, fewer where the
  // device holds fewer.
  const int grid = std::min(kSampleFallbackGrid, resident_grid(reinterpret_cast<const void*>(passes), FB, 0));
  if (grid <= 0) return cudaErrorCooperativeLaunchTooLarge;
  void* args[] = {&failed, &x, &x_stride, &n, &k, &largest, &chunk_len, &chunks, &cap,
                  &radix_states, &hists, &cands};
  if (cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(passes), dim3(unsigned(grid)),
                                                  dim3(FB), args, 0, stream);
      e != cudaSuccess)
    return e;
  sample_fallback_sort_kernel<T, kSortBlock>
      <<<kSampleFallbackGrid, kSortBlock, std::size_t(cap) * sizeof(std::uint64_t), stream>>>(
          failed, x, l.x_stride, l.k, cap, radix_states, cands, static_cast<T*>(l.values), l.v_stride, l.indices,
          l.i_stride);
  return cudaGetLastError();
}

}  // namespace kiln::topk
