// Instantiates gemm_register_blocked for every row of kRegisterBlockedConfigs and dispatches a
// runtime config index to its instantiation.
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
  static_assert(c.stages == 2, "only register-staged double buffering is implemented");
  static_assert(register_blocked_smem_bytes(c) <= 48 * 1024, "static shared memory above 48 KiB");
  const long long tiles = static_cast<long long>((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn);
  gemm_register_blocked_kernel<c.bm, c.bn, c.bk, c.tm, c.tn, c.vec>
      <<<static_cast<unsigned>(tiles), c.threads, 0, stream>>>(g);
  return launch_status("gemm_register_blocked");
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
