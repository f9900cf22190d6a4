// Load functors: what is being reduced.  The kernels are written once against this interface,
// so one ladder of kernels serves both ops:
//
//   load.accumulate(acc, i);                          // term i into acc (scalar path)
//   auto f = load.template load<V>(vi);               // V consecutive elements from index vi * V
//   Load::template accumulate_frag<V>(acc, f);        // ... added after the load (V = 1 or 4)
//
// SumLoad adds x[i]; DotLoad adds x[i] * y[i]; PartialsLoad merges block partials (the second
// pass of the two-kernel variants).  Frag<4> loads need 16-byte aligned pointers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::reduction {

template <class T, int V>
struct VecOf;
template <>
struct VecOf<float, 1> { using type = float; };
template <>
struct VecOf<float, 4> { using type = float4; };
template <>
struct VecOf<int, 1> { using type = int; };
template <>
struct VecOf<int, 4> { using type = int4; };

template <class Acc, class T>
__device__ __forceinline__ void add_terms(Acc& acc, T v) {
  acc.add(static_cast<typename Acc::Scalar>(v));
}
template <class Acc>
__device__ __forceinline__ void add_terms(Acc& acc, float4 v) {
  add_terms(acc, v.x);
  add_terms(acc, v.y);
  add_terms(acc, v.z);
  add_terms(acc, v.w);
}
template <class Acc>
__device__ __forceinline__ void add_terms(Acc& acc, int4 v) {
  add_terms(acc, v.x);
  add_terms(acc, v.y);
  add_terms(acc, v.z);
  add_terms(acc, v.w);
}

template <class Acc>
__device__ __forceinline__ void add_products(Acc& acc, float a, float b) {
  acc.add_product(a, b);
}
template <class Acc>
__device__ __forceinline__ void add_products(Acc& acc, float4 a, float4 b) {
  acc.add_product(a.x, b.x);
  acc.add_product(a.y, b.y);
  acc.add_product(a.z, b.z);
  acc.add_product(a.w, b.w);
}

// out = sum x[i]; T is float or int.
template <class T>
struct SumLoad {
  const T* x;

  template <int V>
  struct Frag {
    typename VecOf<T, V>::type a;
  };
  template <int V>
  __device__ __forceinline__ Frag<V> load(std::int64_t vi) const {
    return {__ldg(reinterpret_cast<const typename VecOf<T, V>::type*>(x) + vi)};
  }
  template <int V, class Acc>
  __device__ __forceinline__ static void accumulate_frag(Acc& acc, const Frag<V>& f) {
    add_terms(acc, f.a);
  }
  template <class Acc>
  __device__ __forceinline__ void accumulate(Acc& acc, std::int64_t i) const {
    add_terms(acc, __ldg(x + i));
  }
};

// out = sum x[i] * y[i] (f32).
struct DotLoad {
  const float* x;
  const float* y;

  template <int V>
  struct Frag {
    typename VecOf<float, V>::type a, b;
  };
  template <int V>
  __device__ __forceinline__ Frag<V> load(std::int64_t vi) const {
    using Vec = typename VecOf<float, V>::type;
    return {__ldg(reinterpret_cast<const Vec*>(x) + vi), __ldg(reinterpret_cast<const Vec*>(y) + vi)};
  }
  template <int V, class Acc>
  __device__ __forceinline__ static void accumulate_frag(Acc& acc, const Frag<V>& f) {
    add_products(acc, f.a, f.b);
  }
  template <class Acc>
  __device__ __forceinline__ void accumulate(Acc& acc, std::int64_t i) const {
    acc.add_product(__ldg(x + i), __ldg(y + i));
  }
};

// Block partials written by an earlier kernel on the same stream (plain loads are coherent).
template <class Acc>
struct PartialsLoad {
  const Acc* partials;

  __device__ __forceinline__ void accumulate(Acc& acc, std::int64_t i) const { acc.merge(partials[i]); }
};

}  // namespace kiln::reduction
