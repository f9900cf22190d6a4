// Kernel bodies of the CUDA reduction variants.  They read their parameters only from template
// arguments (what is reduced, the accumulator, the tree, the sink, items and vector width) and
// launch arguments (n, pointers, grid and block).  Element indices are 64-bit: n may pass 2^31.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "reduction_accumulators.cuh"
#include "reduction_block.cuh"
#include "reduction_loads.cuh"

namespace kiln::reduction {

// The ladder: each thread accumulates a grid-stride slice of the n terms (scalar loads, coalesced
// across the warp), the block combines them with Tree in dynamic shared memory (blockDim.x
// accumulators), and Sink puts the block's total away.  Launched with one block over the block
// partials, the same kernel is the second pass of the two-kernel variants.
template <class Load, class Acc, class Tree, class Sink>
__global__ void __launch_bounds__(1024) tree_reduce_kernel(Load load, std::int64_t n, Sink sink) {
  extern __shared__ __align__(16) unsigned char reduction_smem[];
  Acc* smem = reinterpret_cast<Acc*>(reduction_smem);
  Acc acc = Acc::zero();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    load.accumulate(acc, i);
  const Acc total = Tree::reduce(acc, smem);
  sink.template finish<Tree>(total, smem);
}

// The seed's second pass "on the host", moved to the device so launch() need not synchronise:
// one thread adds the block partials in index order, as the host loop did.
template <class Acc, class Out>
__global__ void add_in_order_kernel(const Acc* partials, int count, Out* out) {
  Acc a = Acc::zero();
  for (int i = 0; i < count; ++i) a.merge(partials[i]);
  *out = a.template result<Out>();
}

// The fast one.  The block takes tiles of blockDim.x * kItems vectors of kVec elements in a
// grid-stride loop; a thread loads its kItems vectors (blockDim.x apart, so each load instruction
// is coalesced) before it adds any, keeping kItems * kVec * sizeof(T) bytes per input in flight.
// The < kVec elements past the last whole vector go to the first threads of the grid.  Warps
// reduce by shuffles and the last block to finish combines the block partials.
//
// accumulate_tiles is that loop over `vectors` whole vectors (load.load<kVec>(0 .. vectors-1)),
// shared with the half-precision kernel (reduction_half.cuh).
template <class Load, int kItems, int kVec, class Acc>
__device__ __forceinline__ void accumulate_tiles(const Load& load, std::int64_t vectors, Acc& acc) {
  using Frag = typename Load::template Frag<kVec>;
  const std::int64_t step = blockDim.x;
  const std::int64_t tile = step * kItems;
  const std::int64_t stride = tile * gridDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * tile + threadIdx.x; base < vectors;
       base += stride) {
    if (base + (kItems - 1) * step < vectors) {
      Frag f[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) f[k] = load.template load<kVec>(base + k * step);
#pragma unroll
      for (int k = 0; k < kItems; ++k) Load::template accumulate_frag<kVec>(acc, f[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const std::int64_t vi = base + k * step;
        if (vi < vectors) Load::template accumulate_frag<kVec>(acc, load.template load<kVec>(vi));
      }
    }
  }
}

template <class Load, class Acc, class Out, int kItems, int kVec>
__global__ void __launch_bounds__(1024)
    warp_shuffle_kernel(Load load, std::int64_t n, Acc* partials, unsigned* counter, Out* out) {
  Acc acc = Acc::zero();
  const std::int64_t vectors = n / kVec;
  accumulate_tiles<Load, kItems, kVec>(load, vectors, acc);
  if (kVec > 1) {
    const std::int64_t i = vectors * kVec + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) load.accumulate(acc, i);
  }
  __shared__ Acc smem[32];
  const Acc total = ShuffleTree::reduce(acc, smem);
  LastBlockToOut<Acc, Out*>{partials, counter, out}.template finish<ShuffleTree>(total, smem);
}

}  // namespace kiln::reduction
