// Instantiates gemm_register_blocked for every row of kRegisterBlockedConfigs and dispatches a
// runtime config index to its instantiation; rows that split_k_offered() also get the split-k
// kernel (one grid row per k slice, for gemm_split_k).
#include <array>
#include <cstddef>
#include <utility>

#include "gemm_register_blocked.cuh"
#include "register_blocked_configs.hpp"

namespace kiln::gemm {
namespace {

using LaunchFn = Status (*)(const GemmArgs&, cudaStream_t);

template <std::size_t I>
Status launch_config(const GemmArgs& g, cudaStream_t stream) {
  constexpr RegisterBlockedConfig c = kRegisterBlockedConfigs[I];
  static_assert(c.threads == (c.bm / c.tm) * (c.bn / c.tn), "threads must be (BM/TM)*(BN/TN)");
  const unsigned tile_count =
      static_cast<unsigned>(static_cast<long long>((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn));
  const unsigned slices = g.k_chunk > 0 ? static_cast<unsigned>((g.k + g.k_chunk - 1) / g.k_chunk) : 1u;
  const dim3 tiles(tile_count, slices);
  if constexpr (c.cp_async == 0) {
    static_assert(c.stages == 2, "register staging is double buffering");
    static_assert(register_blocked_smem_bytes(c) <= 48 * 1024, "static shared memory above 48 KiB");
    if (g.k_chunk <= 0) {
      gemm_register_blocked_kernel<c.bm, c.bn, c.bk, c.tm, c.tn, c.vec><<<tiles, c.threads, 0, stream>>>(g);
    } else if constexpr (split_k_offered(c)) {
      gemm_register_blocked_kernel<c.bm, c.bn, c.bk, c.tm, c.tn, c.vec, true><<<tiles, c.threads, 0, stream>>>(g);
    } else {
      return Status::fail(ErrorKind::argument, "gemm_register_blocked: this config has no split-k kernel");
    }
  } else {
    if (g.k_chunk > 0) return Status::fail(ErrorKind::argument, "gemm_register_blocked: this config has no split-k kernel");
    constexpr int smem = register_blocked_smem_bytes(c);
    auto kernel = gemm_register_blocked_async_kernel<c.bm, c.bn, c.bk, c.tm, c.tn, c.vec, c.stages>;
    // Above 48 KiB a kernel must opt in; the attribute is per device, so it is set on each launch
    // (a cheap host-side call, no synchronisation).
    if (smem > 48 * 1024) {
      const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      if (err != cudaSuccess)
        return Status::fail(ErrorKind::cuda, std::string("gemm_register_blocked: cudaFuncSetAttribute: ") +
                                                 cudaGetErrorString(err));
    }
    kernel<<<tiles, c.threads, smem, stream>>>(g);
  }
  return cuda_launch_status("gemm_register_blocked");
}

template <std::size_t... I>
constexpr std::array<LaunchFn, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {&launch_config<I>...};
}

constexpr auto kLaunchTable = make_table(std::make_index_sequence<kRegisterBlockedConfigCount>{});

}  // namespace

Status launch_register_blocked(const GemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kRegisterBlockedConfigCount)
    return Status::fail(ErrorKind::argument, "gemm_register_blocked: no instantiated config " +
                                                 std::to_string(config_index));
  if (g.m == 0 || g.n == 0) return Status::success();
  return kLaunchTable[config_index](g, as_stream(stream));
}

}  // namespace kiln::gemm
