// How many blocks of a kernel the current device holds at once (all SMs), measured once per
// device, kernel and dynamic shared memory size: the grid of a cooperative launch (which needs
// every block resident) or of a persistent kernel.  Raises the kernel's dynamic shared memory
// limit first when it and the static shared memory need more than the default 48 KiB.  0 if it cannot be resident at all.
//
//   const int grid = std::min<std::int64_t>(rows, resident_grid(reinterpret_cast<const void*>(&kernel), 256, smem));
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

#include <cuda_runtime.h>

namespace kiln::topk {

inline int resident_grid(const void* kernel, int threads, std::size_t smem) {
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, std::size_t>, int> grids;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(device, kernel, smem);
  if (auto it = grids.find(key); it != grids.end()) return it->second;
  int sms = 0, per_sm = 0;
  // The 48 KiB default bounds static plus dynamic shared memory (2026-11-27: 32 KiB of row buffer,
  // 16 KiB of lists and 2.2 KiB of static counters failed to launch without the raise).  The limit
  // is the kernel's, not the launch's: raised to the most the device allows, so that a launch of
  // the same kernel with more (cached above) is never refused after one with less.
  cudaFuncAttributes attr{};
  int optin = 0;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 0;
  if (smem + attr.sharedSizeBytes > 48 * 1024) {
    const int most = optin - int(attr.sharedSizeBytes);
    if (int(smem) > most ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most) != cudaSuccess)
      return 0;
  }
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess)
    return 0;
  grids[key] = sms * per_sm;
  return sms * per_sm;
}

}  // namespace kiln::topk
