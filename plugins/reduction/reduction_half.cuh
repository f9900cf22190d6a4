// Half-precision dot and reduce_sum: f16 / bf16 inputs, f32 accumulation, the result written in
// f32 or the input dtype.  The same tile loop as warp_shuffle (accumulate_tiles), with load
// functors that read 8 halves per 16-byte load and convert them to float in registers:
//
//   HalfSumLoad<Bf16Bits>{x, head}        out = sum x[i]
//   HalfDotLoad<F16Bits>{x, y, head}      out = sum x[i] * y[i]  (the products are exact in f32)
//
// Elements travel as their 16-bit patterns (unsigned short), as kiln stores them; the traits
// convert.  `head` is the number of elements before x + head, the first 16-byte boundary: they and
// the < 8 past the last whole vector are read singly by the first threads of the grid, so a view
// that starts at any 2-byte offset still streams in 16-byte loads.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "reduction_accumulators.cuh"
#include "reduction_block.cuh"
#include "reduction_kernels.cuh"

namespace kiln::reduction {

// bf16 -> float is exact and is the pattern shifted into the high half of a float.
struct Bf16Bits {
  __device__ static float to_float(unsigned short b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
  // The two elements of a 32-bit word, lower address first.
  __device__ static float2 to_float2(unsigned w) { return {__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u)}; }
  __device__ static unsigned short from_float(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

struct F16Bits {
  __device__ static float to_float(unsigned short h) { return __half2float(__ushort_as_half(h)); }
  __device__ static float2 to_float2(unsigned w) {
    const __half2 h = __halves2half2(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu)),
                                     __ushort_as_half(static_cast<unsigned short>(w >> 16)));
    return __half22float2(h);
  }
  __device__ static unsigned short from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

// The output of a half reduction: f32, or the input dtype when in_input_type (out16 = 1), chosen
// per launch so it costs no instantiation.  store_result() overload for LastBlockToOut.
template <class Bits>
struct HalfOut {
  void* ptr;
  bool in_input_type;
};
template <class Bits, class Acc>
__device__ __forceinline__ void store_result(const HalfOut<Bits>& out, const Acc& a) {
  const float v = a.template result<float>();
  if (out.in_input_type)
    *static_cast<unsigned short*>(out.ptr) = Bits::from_float(v);
  else
    *static_cast<float*>(out.ptr) = v;
}

template <int V>
struct HalfVec;
template <>
struct HalfVec<8> { using type = uint4; };
template <>
struct HalfVec<1> { using type = unsigned short; };

template <class Bits, class Acc>
__device__ __forceinline__ void add_halves(Acc& acc, unsigned short v) {
  acc.add(Bits::to_float(v));
}
template <class Bits, class Acc>
__device__ __forceinline__ void add_halves(Acc& acc, uint4 v) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = Bits::to_float2(words[k]);
    acc.add(f.x);
    acc.add(f.y);
  }
}

template <class Bits, class Acc>
__device__ __forceinline__ void add_half_products(Acc& acc, unsigned short a, unsigned short b) {
  acc.add_product(Bits::to_float(a), Bits::to_float(b));
}
template <class Bits, class Acc>
__device__ __forceinline__ void add_half_products(Acc& acc, uint4 a, uint4 b) {
  const unsigned aw[4] = {a.x, a.y, a.z, a.w}, bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 fa = Bits::to_float2(aw[k]), fb = Bits::to_float2(bw[k]);
    acc.add_product(fa.x, fb.x);
    acc.add_product(fa.y, fb.y);
  }
}

// Vector vi covers elements head + vi * V ... head + vi * V + V - 1; accumulate(acc, i) reads
// element i singly (the head and the tail).
template <class Bits>
struct HalfSumLoad {
  const unsigned short* x;
  std::int64_t head;

  template <int V>
  struct Frag {
    typename HalfVec<V>::type a;
  };
  template <int V>
  __device__ __forceinline__ Frag<V> load(std::int64_t vi) const {
    return {__ldg(reinterpret_cast<const typename HalfVec<V>::type*>(x + head) + vi)};
  }
  template <int V, class Acc>
  __device__ __forceinline__ static void accumulate_frag(Acc& acc, const Frag<V>& f) {
    add_halves<Bits>(acc, f.a);
  }
  template <class Acc>
  __device__ __forceinline__ void accumulate(Acc& acc, std::int64_t i) const {
    add_halves<Bits>(acc, __ldg(x + i));
  }
};

template <class Bits>
struct HalfDotLoad {
  const unsigned short* x;
  const unsigned short* y;
  std::int64_t head;

  template <int V>
  struct Frag {
    typename HalfVec<V>::type a, b;
  };
  template <int V>
  __device__ __forceinline__ Frag<V> load(std::int64_t vi) const {
    using Vec = typename HalfVec<V>::type;
    return {__ldg(reinterpret_cast<const Vec*>(x + head) + vi), __ldg(reinterpret_cast<const Vec*>(y + head) + vi)};
  }
  template <int V, class Acc>
  __device__ __forceinline__ static void accumulate_frag(Acc& acc, const Frag<V>& f) {
    add_half_products<Bits>(acc, f.a, f.b);
  }
  template <class Acc>
  __device__ __forceinline__ void accumulate(Acc& acc, std::int64_t i) const {
    add_half_products<Bits>(acc, __ldg(x + i), __ldg(y + i));
  }
};

// warp_shuffle for halves: `vectors` whole kVec-vectors start at element load.head; the head
// elements before them and the n - head - vectors * kVec after them (each < 8) go to the first
// threads of the grid.  f32 partials, last-block finish, result stored through HalfOut.
template <class Load, class Bits, int kItems, int kVec>
__global__ void __launch_bounds__(1024)
    half_warp_shuffle_kernel(Load load, std::int64_t n, std::int64_t vectors, PlainAcc<float>* partials,
                             unsigned* counter, HalfOut<Bits> out) {
  using Acc = PlainAcc<float>;
  Acc acc = Acc::zero();
  accumulate_tiles<Load, kItems, kVec>(load, vectors, acc);
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < load.head) load.accumulate(acc, g);
  const std::int64_t tail = load.head + vectors * kVec + g;
  if (tail < n) load.accumulate(acc, tail);
  __shared__ Acc smem[32];
  const Acc total = ShuffleTree::reduce(acc, smem);
  LastBlockToOut<Acc, HalfOut<Bits>>{partials, counter, out}.template finish<ShuffleTree>(total, smem);
}

}  // namespace kiln::reduction
