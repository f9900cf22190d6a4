// Instantiates gemm_half_mma for every row of kHalfMmaConfigs, both input types and both B
// layouts, and dispatches a runtime (config, type, layout) to its instantiation.
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "gemm_half_mma.cuh"
#include "half_mma_configs.hpp"
#include "half_mma_launch.hpp"

namespace kiln::gemm {
namespace {

using LaunchFn = Status (*)(const HalfKernelArgs&, int batch, cudaStream_t);

template <std::size_t I, bool BF16, bool B_COL>
Status launch_config(const HalfKernelArgs& g, int batch, cudaStream_t stream) {
  constexpr HalfMmaConfig c = kHalfMmaConfigs[I];
  static_assert(c.threads == 32 * (c.bm / c.wm) * (c.bn / c.wn), "threads must be 32*(BM/WM)*(BN/WN)");
  constexpr int smem = half_mma_smem_bytes(c, B_COL);
  auto kernel = gemm_half_mma_kernel<BF16, B_COL, c.bm, c.bn, c.bk, c.wm, c.wn, c.stages>;
  if (smem > 48 * 1024) {  // above 48 KiB a kernel opts in, per device, so on each launch
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (err != cudaSuccess)
      return Status::fail(ErrorKind::cuda, std::string("gemm_half_mma: cudaFuncSetAttribute: ") + cudaGetErrorString(err));
  }
  const long long tiles = static_cast<long long>((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn);
  kernel<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(batch)), c.threads, smem, stream>>>(g);
  return cuda_launch_status("gemm_half_mma");
}

template <bool BF16, bool B_COL, std::size_t... I>
constexpr std::array<LaunchFn, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {&launch_config<I, BF16, B_COL>...};
}

constexpr auto kIdx = std::make_index_sequence<kHalfMmaConfigCount>{};
// [bf16][b_col][config]
constexpr std::array<std::array<std::array<LaunchFn, kHalfMmaConfigCount>, 2>, 2> kLaunchTable = {{
    {{make_table<false, false>(kIdx), make_table<false, true>(kIdx)}},
    {{make_table<true, false>(kIdx), make_table<true, true>(kIdx)}},
}};

}  // namespace

Status launch_half_mma(const HalfGemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kHalfMmaConfigCount)
    return Status::fail(ErrorKind::argument, "gemm_half_mma: no instantiated config " + std::to_string(config_index));
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::success();
  if (g.batch > 65535)
    return Status::fail(ErrorKind::unsupported, "gemm_half_mma: batch " + std::to_string(g.batch) + " exceeds 65535");
  HalfKernelArgs k{static_cast<const std::uint16_t*>(g.a), static_cast<const std::uint16_t*>(g.b), g.c, g.m, g.n, g.k,
                   g.lda, g.ldb, g.ldc, g.stride_a, g.stride_b, g.stride_c, g.alpha, g.beta, g.c_half ? 1 : 0};
  return kLaunchTable[g.bf16 ? 1 : 0][g.b_col ? 1 : 0][config_index](k, g.batch, as_stream(stream));
}

}  // namespace kiln::gemm
