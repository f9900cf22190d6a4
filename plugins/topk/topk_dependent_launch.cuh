// Programmatic dependent launch (sm_90 on) for a chain of kernels in one stream: a kernel queued
// behind another may be scheduled while that one's last blocks still run, instead of after its
// completion, so the launch gap between them overlaps the first one's tail.
//
// The contract, for a chain K1 -> K2 -> ... of one op:
//  - K1 is launched plainly (it waits for whatever the caller queued before it);
//  - every later kernel is launched with launch_after_prior_grid() and calls wait_for_prior_grid()
//    in every block before its first global memory access (read or write) and before any return:
//    it then runs only once the kernel before it has completed and its writes are visible, and
//    its own completion implies that of the whole chain before it (what the caller's next,
//    plainly launched, work relies on);
//  - a kernel may call let_next_grid_start() (after its wait) so the next one's blocks are
//    scheduled as soon as every block of this one has called it or exited.
// Launched plainly, or compiled for an architecture below sm_90, both device calls do nothing.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

namespace kiln::topk {

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void let_next_grid_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Whether the kernels of this plugin carry the waits above on the current device: their PTX
// targets sm_90 or later (ptxVersion, not the binary's: a compute_80 PTX JIT-compiled for an
// sm_90 device has no waits).  Every kernel of the plugin is built for the same architectures,
// so one answer per device is cached, from the first kernel asked about.
inline bool dependent_launch_usable(const void* kernel) {
  constexpr int kDevices = 64;
  static std::array<std::atomic<int>, kDevices> known{};  // 0 unknown, 1 no, 2 yes
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (device >= 0 && device < kDevices) {
    if (const int k = known[device].load(std::memory_order_relaxed); k != 0) return k == 2;
  }
  cudaFuncAttributes attr{};
  const bool usable = cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.ptxVersion >= 90;
  if (device >= 0 && device < kDevices) known[device].store(usable ? 2 : 1, std::memory_order_relaxed);
  return usable;
}

// Launches `kernel` as a programmatic dependent of the kernel queued before it in `stream` (a
// plain launch where the device or the kernel's code cannot), cooperatively when asked.
template <class... Params, class... Args>
cudaError_t launch_after_prior_grid(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                                    cudaStream_t stream, bool cooperative, Args&&... args) {
  cudaLaunchAttribute attrs[2]{};
  unsigned count = 0;
  if (dependent_launch_usable(reinterpret_cast<const void*>(kernel))) {
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cooperative) {
    attrs[count].id = cudaLaunchAttributeCooperative;
    attrs[count].val.cooperative = 1;
    ++count;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attrs;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace kiln::topk
