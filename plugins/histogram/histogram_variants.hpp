// The CUDA variants of both histogram ops (only built with the CUDA backend):
//   histogram[_range]_global_atomic  atomics straight into the global bins
//   histogram[_range]_smem           one shared-memory histogram per block
//   histogram[_range]_warp_private   several private copies per block, 16-byte loads
//   histogram[_range]_thread_private per-thread 8-bit counters, no atomics in the main loop
//                                    (histogram_range: bins <= 256)
#pragma once
#include <kiln/registry.hpp>

namespace kiln::histogram {

// Adds the eight CUDA variants; throws RegistryError like Registry::add_variant.
void add_histogram_cuda_variants(Registry& registry);

}  // namespace kiln::histogram
