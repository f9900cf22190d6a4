// Instantiates the swapped small-m wgmma gemm (gemm_wgmma_swap.cuh) for the kernel rows of
// kWgmmaConfigs with `swap` = 1, bf16 and f16, B column-major (W K-major) and row-major (W
// MN-major): 2 x 2 x 2 kernels.  Builds the tensor maps, launches one block per work unit and,
// with split k, the reduction (wgmma_split_reduce.cu).  Compiled for sm_90a only.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "gemm_common.cuh"
#include "gemm_wgmma_swap.cuh"
#include "wgmma_configs.hpp"
#include "wgmma_split_k.hpp"
#include "wgmma_swap.hpp"
#include "wgmma_tensor_map.hpp"

namespace kiln::gemm {
namespace {

using SwapLaunchFn = Status (*)(const WgmmaGemmArgs&, const WgmmaConfig& row, cudaStream_t);

// What the two tensor maps of a launch are encoded from (a repeated call reuses them).
struct SwapMapKey {
  const void* a;
  const void* b;
  int m, n, k, batch;
  std::int64_t lda, ldb, stride_a, stride_b;
  bool operator==(const SwapMapKey& o) const {
    return a == o.a && b == o.b && m == o.m && n == o.n && k == o.k && batch == o.batch && lda == o.lda &&
           ldb == o.ldb && stride_a == o.stride_a && stride_b == o.stride_b;
  }
};
struct SwapMaps {
  bool valid = false;
  SwapMapKey key{};
  CUtensorMap w{}, x{};
  bool w_batched = false, x_batched = false;
};

template <std::size_t I, bool BF16, bool W_MN>
Status launch_swap(const WgmmaGemmArgs& g, const WgmmaConfig& row, cudaStream_t stream) {
  constexpr WgmmaConfig c = kWgmmaConfigs[I];
  static_assert(c.swap == 1 && c.bk == 64 && c.bn == 64 * c.consumers, "a swapped row: 64 rows of W per consumer");
  constexpr int smem = wgmma_smem_bytes(c);
  auto kernel = gemm_wgmma_swap_kernel<BF16, W_MN, c.bm, c.stages, c.consumers>;
  const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (attr != cudaSuccess)
    return Status::fail(ErrorKind::cuda, std::string("gemm_wgmma (swapped): cudaFuncSetAttribute: ") + cudaGetErrorString(attr));
  const WgmmaSplitPlan plan = wgmma_split_plan(g.m, g.n, g.k, g.batch, row.splits, c.bk);
  const bool split = plan.splits > 1;
  if (split && (g.partials == nullptr || reinterpret_cast<std::uintptr_t>(g.partials) % 16 != 0))
    return Status::fail(ErrorKind::argument, "gemm_wgmma: split k needs a 16-byte aligned workspace of " +
                                                 std::to_string(plan.bytes) + " bytes");
  WgmmaSwapArgs k{};
  k.out = split ? g.partials : g.c;
  k.m = g.m;
  k.n = g.n;
  k.k = g.k;
  k.batch = g.batch;
  k.ld_out = split ? plan.ld : g.ldc;
  k.stride_out = split ? static_cast<long long>(g.m) * plan.ld : g.stride_c;
  k.alpha = split ? 1.0f : g.alpha;
  k.beta = split ? 0.0f : g.beta;
  k.out_half = !split && g.c_half ? 1 : 0;
  k.tiles_m = (g.m + c.bm - 1) / c.bm;
  k.tiles_n = (g.n + c.bn - 1) / c.bn;
  k.splits = plan.splits;
  k.kb_per_split = plan.kb_per_split;
  const SwapMapKey key{g.a, g.b, g.m, g.n, g.k, g.batch, g.lda, g.ldb, g.stride_a, g.stride_b};
  thread_local SwapMaps last;
  if (!last.valid || !(last.key == key)) {
    last.valid = false;
    const CUtensorMapDataType type = BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    // W = B: K-major (column-major B) is n rows of k, boxes of 64 * consumers rows; MN-major
    // (row-major B) k rows of n, boxes of 64 n x 64 k rows.
    Status s = W_MN ? wgmma_encode_matrix(last.w, g.b, type, 2, g.k, g.n, g.ldb, g.batch, g.stride_b, c.bk, last.w_batched)
                    : wgmma_encode_matrix(last.w, g.b, type, 2, g.n, g.k, g.ldb, g.batch, g.stride_b, c.bn, last.w_batched);
    if (!s.ok()) return s;
    // X = A (row-major): m rows of k, boxes of bm rows.
    s = wgmma_encode_matrix(last.x, g.a, type, 2, g.m, g.k, g.lda, g.batch, g.stride_a, c.bm, last.x_batched);
    if (!s.ok()) return s;
    last.key = key;
    last.valid = true;
  }
  k.w_batched = last.w_batched ? 1 : 0;
  k.x_batched = last.x_batched ? 1 : 0;
  const long long units = static_cast<long long>(k.tiles_m) * k.tiles_n * g.batch * plan.splits;
  if (units > 0x7FFFFFFFLL)
    return Status::fail(ErrorKind::unsupported, "gemm_wgmma (swapped): more than 2^31 - 1 work units");
  kernel<<<static_cast<unsigned>(units), wgmma_threads(c), smem, stream>>>(last.w, last.x, k);
  const Status launched = cuda_launch_status("gemm_wgmma (swapped)");
  if (!launched.ok() || !split) return launched;
  WgmmaSplitReduceArgs r;
  r.partials = static_cast<const float*>(g.partials);
  r.ld = plan.ld;
  r.m = g.m;
  r.n = g.n;
  r.batch = g.batch;
  r.splits = plan.splits;
  r.c = g.c;
  r.ldc = g.ldc;
  r.stride_c = g.stride_c;
  r.c_type = !g.c_half ? 0 : BF16 ? 1 : 2;
  r.alpha = g.alpha;
  r.beta = g.beta;
  return launch_wgmma_split_reduce(r, stream);
}

// Row I's launchers ([bf16][W MN-major]), or nullptr where row I is not a swapped kernel row
// (`if constexpr` keeps the others from being instantiated at all).
template <std::size_t I>
constexpr std::array<SwapLaunchFn, 4> swap_entries() {
  if constexpr (kWgmmaConfigs[I].swap == 1 && wgmma_kernel_row(static_cast<int>(I)) == static_cast<int>(I))
    return {&launch_swap<I, false, false>, &launch_swap<I, false, true>, &launch_swap<I, true, false>,
            &launch_swap<I, true, true>};
  else
    return {nullptr, nullptr, nullptr, nullptr};
}

template <std::size_t... I>
constexpr std::array<std::array<SwapLaunchFn, 4>, sizeof...(I)> make_swap_table(std::index_sequence<I...>) {
  return {swap_entries<I>()...};
}

constexpr auto kSwapTable = make_swap_table(std::make_index_sequence<kWgmmaConfigCount>{});

}  // namespace

Status launch_wgmma_swap(const WgmmaGemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kWgmmaConfigCount || !kWgmmaConfigs[config_index].swap)
    return Status::fail(ErrorKind::argument, "gemm_wgmma: config " + std::to_string(config_index) + " is not a swapped row");
  if (g.tf32 || g.split3)
    return Status::fail(ErrorKind::unsupported, "gemm_wgmma: the swapped small-m rows compute 16-bit inputs only");
  if (g.a_mn)
    return Status::fail(ErrorKind::unsupported,
                        "gemm_wgmma: the swapped small-m rows read a row-major A (ta = 0) only (X K-major)");
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::success();
  const SwapLaunchFn fn = kSwapTable[wgmma_kernel_row(config_index)][(g.bf16 ? 2 : 0) + (g.b_mn ? 1 : 0)];
  if (fn == nullptr) return Status::fail(ErrorKind::internal, "gemm_wgmma: swapped row without a kernel");
  return fn(g, kWgmmaConfigs[config_index], as_stream(stream));
}

}  // namespace kiln::gemm
