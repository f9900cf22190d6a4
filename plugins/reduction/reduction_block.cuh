// Block-level pieces of the reduction kernels.
//
// Trees: `Tree::reduce(a, smem)` is called by every thread of the block with its accumulator and
// returns the block's total, valid in thread 0.  InterleavedTree and SequentialTree need smem
// with blockDim.x entries and a power-of-two blockDim.x; ShuffleTree needs 32 entries and a
// multiple of 32.  Each ends with all of smem read before the next __syncthreads().
//
// Sinks: `sink.template finish<Tree>(total, smem)`, called by every thread after the tree, puts
// the block's total where the variant wants it: the block's slot in a partials array, the output
// (one-block launches), an atomicAdd into the output, or the last-block finish.
#pragma once
#include <cuda_runtime.h>

#include "reduction_accumulators.cuh"

namespace kiln::reduction {

template <class Acc>
__device__ __forceinline__ Acc warp_reduce(Acc a) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) a.merge(a.shfl_xor(mask));
  return a;
}

// The seed's "interleaved pairs": at step s, threads whose index is a multiple of 2s add the
// neighbour s away.  Divergent within warps and strided in shared memory (bank conflicts): the
// slow rung, kept for comparison.
struct InterleavedTree {
  template <class Acc>
  __device__ static Acc reduce(Acc a, Acc* smem) {
    const unsigned tid = threadIdx.x;
    smem[tid] = a;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s <<= 1) {
      if (tid % (2 * s) == 0) smem[tid].merge(smem[tid + s]);  // tid + s < blockDim.x: tid is a multiple of 2s
      __syncthreads();
    }
    return smem[0];
  }
};

// Sequential addressing: the upper half folds onto the lower half, so active threads are
// contiguous (whole warps retire) and accesses are conflict-free.
struct SequentialTree {
  template <class Acc>
  __device__ static Acc reduce(Acc a, Acc* smem) {
    const unsigned tid = threadIdx.x;
    smem[tid] = a;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) smem[tid].merge(smem[tid + s]);
      __syncthreads();
    }
    return smem[0];
  }
};

// Shuffles within each warp, one shared slot per warp, then the first warp shuffles those.
struct ShuffleTree {
  template <class Acc>
  __device__ static Acc reduce(Acc a, Acc* smem) {
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned warps = blockDim.x >> 5;
    a = warp_reduce(a);
    if (lane == 0) smem[warp] = a;
    __syncthreads();
    if (warp == 0) {
      a = lane < warps ? smem[lane] : Acc::zero();
      a = warp_reduce(a);
    }
    return a;
  }
};

template <class Acc>
struct ToPartials {
  Acc* partials;
  template <class Tree>
  __device__ void finish(const Acc& total, Acc*) const {
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
  }
};

// For launches of a single block.
template <class Acc, class Out>
struct ToOut {
  Out* out;
  template <class Tree>
  __device__ void finish(const Acc& total, Acc*) const {
    if (threadIdx.x == 0) *out = total.template result<Out>();
  }
};

__device__ __forceinline__ void atomic_add_out(float* out, const PlainAcc<float>& a) { atomicAdd(out, a.v); }
__device__ __forceinline__ void atomic_add_out(int* out, const PlainAcc<unsigned>& a) {
  atomicAdd(reinterpret_cast<unsigned*>(out), a.v);  // wraps modulo 2^32, like the int32 sum
}

// The output must be zero before the launch (the adapter queues a cudaMemsetAsync).
template <class Acc, class Out>
struct AtomicToOut {
  Out* out;
  template <class Tree>
  __device__ void finish(const Acc& total, Acc*) const {
    if (threadIdx.x == 0) atomic_add_out(out, total);
  }
};

// Writes a result into an output element (float*, int*).  Outputs chosen at launch time
// (reduction_half.cuh's HalfOut) overload it.
template <class T, class Acc>
__device__ __forceinline__ void store_result(T* out, const Acc& a) {
  *out = a.template result<T>();
}

// Single pass: each block writes its partial, fences, and takes a ticket from the counter; the
// block holding the last ticket has seen every other block's fenced partial, so it reduces all
// of them in a fixed order (the result does not depend on block scheduling) and writes the
// output.  It then puts the counter back to zero; the adapter also zeroes it before each launch,
// since workspace contents are unspecified on first use.  OutRef: a pointer to the output
// element, or anything store_result() takes.
template <class Acc, class OutRef>
struct LastBlockToOut {
  Acc* partials;
  unsigned* counter;
  OutRef out;

  template <class Tree>
  __device__ void finish(const Acc& total, Acc* smem) const {
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = total;
      __threadfence();  // the partial is visible device-wide before the ticket is taken
      const unsigned ticket = atomicAdd(counter, 1u);
      is_last = ticket == gridDim.x - 1;
    }
    __syncthreads();  // also orders the tree's last reads of smem before it is reused below
    if (!is_last) return;
    __threadfence();
    Acc a = Acc::zero();
    for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) a.merge(Acc::load_coherent(partials + i));
    const Acc grand = Tree::reduce(a, smem);
    if (threadIdx.x == 0) {
      store_result(out, grand);
      *counter = 0u;
    }
  }
};

}  // namespace kiln::reduction
