// The second pass of gemm_wgmma's split k (wgmma_split_k.hpp): C = alpha * (sum of the slices'
// f32 partial tiles, added in slice order, so the result does not depend on the launch) + beta * C.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "gemm_common.cuh"
#include "wgmma_split_k.hpp"

namespace kiln::gemm {
namespace {

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (sizeof(T) == 4)
    return v;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return __half2float(v);
}
template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (sizeof(T) == 4)
    return v;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return __float2half_rn(v);
}

// One thread per 4 adjacent outputs of a row (grid-stride): the partials' rows are ld = n rounded
// up to 4 floats, so each read is one float4.  Four outputs go out in one 16-byte (f32) or 8-byte
// (16-bit) store when they are all inside n and C's pitch keeps them aligned, else one by one.
template <typename T>
__global__ void wgmma_split_reduce_kernel(WgmmaSplitReduceArgs r, int vector_store) {
  // Launched as a programmatic dependent of the gemm kernel (sm_90): its blocks may start while the
  // gemm's last blocks run, and wait here until the gemm grid has completed and its partials are
  // visible.  (Without the launch attribute this returns at once: the stream already ordered it.)
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const long long quads = r.ld / 4;
  const long long per_entry = static_cast<long long>(r.m) * quads;
  const long long total = per_entry * r.batch;
  const long long slice = static_cast<long long>(r.batch) * r.m * r.ld;  // floats between slices
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  T* c = static_cast<T*>(r.c);
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const long long b = i / per_entry, rest = i % per_entry;
    const long long row = rest / quads, col = (rest % quads) * 4;
    const float* p = r.partials + (b * r.m + row) * r.ld + col;
    // Four slices' loads in flight at a time (independent), added in slice order.
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s0 = 0; s0 < r.splits; s0 += 4) {
      float4 v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[j] = s0 + j < r.splits ? __ldcg(reinterpret_cast<const float4*>(p + (s0 + j) * slice)) : make_float4(0, 0, 0, 0);
#pragma unroll
      for (int j = 0; j < 4; ++j) acc.x += v[j].x, acc.y += v[j].y, acc.z += v[j].z, acc.w += v[j].w;
    }
    float out[4] = {acc.x, acc.y, acc.z, acc.w};
    T* dst = c + b * r.stride_c + row * r.ldc + col;
    const int cols = static_cast<int>(min(4LL, r.n - col));
    for (int j = 0; j < 4; ++j) {
      out[j] *= r.alpha;
      if (r.beta != 0.0f && j < cols) out[j] = fmaf(r.beta, to_float(dst[j]), out[j]);
    }
    if (vector_store && cols == 4) {
      if constexpr (sizeof(T) == 4) {
        *reinterpret_cast<float4*>(dst) = make_float4(out[0], out[1], out[2], out[3]);
      } else {
        T packed[4] = {from_float<T>(out[0]), from_float<T>(out[1]), from_float<T>(out[2]), from_float<T>(out[3])};
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(packed);
      }
    } else {
      for (int j = 0; j < cols; ++j) dst[j] = from_float<T>(out[j]);
    }
  }
}

}  // namespace

Status launch_wgmma_split_reduce(const WgmmaSplitReduceArgs& r, void* stream) {
  if (r.m == 0 || r.n == 0 || r.batch == 0) return Status::success();
  if (r.partials == nullptr || r.c == nullptr || r.ld % 4 != 0 || r.ld < r.n || r.splits < 1)
    return Status::fail(ErrorKind::argument, "gemm_wgmma split-k reduce: bad partials or C");
  const int elem = r.c_type == 0 ? 4 : 2;
  // Vector stores: every group of 4 outputs starts at a multiple of 4 elements of a row, so C's
  // pointer, pitch and batch stride must keep 4 elements aligned.
  const std::uintptr_t vec = 4 * static_cast<std::uintptr_t>(elem);
  const bool aligned = reinterpret_cast<std::uintptr_t>(r.c) % vec == 0 && (r.ldc * elem) % vec == 0 &&
                       (r.batch <= 1 || (r.stride_c * elem) % vec == 0);
  constexpr int kBlock = 128;  // small outputs (m = 1) still spread over several SMs
  const long long total = static_cast<long long>(r.batch) * r.m * (r.ld / 4);
  const unsigned grid = static_cast<unsigned>(std::min<long long>((total + kBlock - 1) / kBlock, 132LL * 32));
  // Programmatic dependent launch: the reduction's launch overlaps the gemm's tail instead of
  // following its completion (one launch gap less per call; CUDA-graph capturable).
  cudaLaunchConfig_t launch{};
  cudaLaunchAttribute pdl{};
  pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  pdl.val.programmaticStreamSerializationAllowed = 1;
  launch.gridDim = dim3(grid);
  launch.blockDim = dim3(kBlock);
  launch.stream = as_stream(stream);
  launch.attrs = &pdl;
  launch.numAttrs = 1;
  const int vector = aligned ? 1 : 0;
  cudaError_t err;
  if (r.c_type == 0)
    err = cudaLaunchKernelEx(&launch, wgmma_split_reduce_kernel<float>, r, vector);
  else if (r.c_type == 1)
    err = cudaLaunchKernelEx(&launch, wgmma_split_reduce_kernel<__nv_bfloat16>, r, vector);
  else
    err = cudaLaunchKernelEx(&launch, wgmma_split_reduce_kernel<__half>, r, vector);
  if (err != cudaSuccess)
    return Status::fail(ErrorKind::cuda, std::string("gemm_wgmma split-k reduce: launch: ") + cudaGetErrorString(err));
  return cuda_launch_status("gemm_wgmma split-k reduce");
}

}  // namespace kiln::gemm
