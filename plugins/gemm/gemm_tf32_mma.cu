// Instantiates gemm_tf32_mma and gemm_3xtf32_mma for every row of kTf32MmaConfigs and dispatches a runtime config
// index to its instantiation.
#include <array>
#include <cstddef>
#include <utility>

#include "gemm_tf32_mma.cuh"
#include "tf32_mma_configs.hpp"

namespace kiln::gemm {
namespace {

using LaunchFn = Status (*)(const GemmArgs&, cudaStream_t);

template <std::size_t I, bool SPLIT3>
Status launch_config(const GemmArgs& g, cudaStream_t stream) {
  constexpr Tf32MmaConfig c = kTf32MmaConfigs[I];
  static_assert(c.threads == 32 * (c.bm / c.wm) * (c.bn / c.wn), "threads must be 32*(BM/WM)*(BN/WN)");
  constexpr int smem = tf32_mma_smem_bytes(c);
  auto kernel = gemm_tf32_mma_kernel<c.bm, c.bn, c.bk, c.wm, c.wn, c.stages, SPLIT3>;
  // Above 48 KiB a kernel must opt in; the attribute is per device, so it is set on each launch
  // (a cheap host-side call, no synchronisation).
  if (smem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (err != cudaSuccess)
      return Status::fail(ErrorKind::cuda, std::string("gemm_tf32_mma: cudaFuncSetAttribute: ") +
                                               cudaGetErrorString(err));
  }
  const long long tiles = static_cast<long long>((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn);
  kernel<<<static_cast<unsigned>(tiles), c.threads, smem, stream>>>(g);
  return cuda_launch_status(SPLIT3 ? "gemm_3xtf32_mma" : "gemm_tf32_mma");
}

template <bool SPLIT3, std::size_t... I>
constexpr std::array<LaunchFn, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {&launch_config<I, SPLIT3>...};
}

constexpr auto kLaunchTable = make_table<false>(std::make_index_sequence<kTf32MmaConfigCount>{});
constexpr auto kLaunchTable3x = make_table<true>(std::make_index_sequence<kTf32MmaConfigCount>{});

}  // namespace

Status launch_tf32_mma(const GemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kTf32MmaConfigCount)
    return Status::fail(ErrorKind::argument, "gemm_tf32_mma: no instantiated config " +
                                                 std::to_string(config_index));
  if (g.m == 0 || g.n == 0) return Status::success();
  return kLaunchTable[config_index](g, as_stream(stream));
}

Status launch_3xtf32_mma(const GemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kTf32MmaConfigCount)
    return Status::fail(ErrorKind::argument, "gemm_3xtf32_mma: no instantiated config " +
                                                 std::to_string(config_index));
  if (g.m == 0 || g.n == 0) return Status::success();
  return kLaunchTable3x[config_index](g, as_stream(stream));
}

}  // namespace kiln::gemm
