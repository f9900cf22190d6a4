// Host-side launch of the half-precision warp_shuffle kernels, shared by half_warp_shuffle_dot.cu
// and half_warp_shuffle_sum.cu: the head/vector split, the workspace, and the table of
// instantiated (items_per_thread, vector_width) configs.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <kiln/cuda_status.hpp>
#include <kiln/errors.hpp>

#include "reduction_cuda.cuh"
#include "reduction_half.cuh"
#include "reduction_launch.hpp"
#include "reduction_params.hpp"

namespace kiln::reduction {

// Elements before the first 16-byte boundary at or after p (p is 2-byte aligned): 0 ... 7.
inline std::int64_t halves_to_boundary(const void* p) {
  const auto misalign = reinterpret_cast<std::uintptr_t>(p) % 16;
  return static_cast<std::int64_t>((16 - misalign) % 16 / 2);
}

// One instantiated (items, vector width): the head/vector split, a zeroed block counter, the kernel.
template <class Load, class Bits, int kItems, int kVec>
Status run_half_warp_shuffle(Load load, std::int64_t n, const ReduceCall& call, const WarpShuffleConfig& c,
                             void* workspace, const char* variant) {
  if (workspace == nullptr) return Status::fail(ErrorKind::argument, std::string(variant) + ": needs a workspace");
  const auto stream = static_cast<cudaStream_t>(call.stream);
  load.head = kVec > 1 ? std::min(halves_to_boundary(call.x), n) : 0;
  const std::int64_t vectors = (n - load.head) / kVec;
  const WorkspaceView<PlainAcc<float>> ws(workspace);
  const int grid = warp_shuffle_grid(n, c, call.sm_count);
  if (Status s = cuda_status(cudaMemsetAsync(ws.counter, 0, sizeof(unsigned), stream),
                             std::string(variant) + ": cudaMemsetAsync");
      !s.ok())
    return s;
  const HalfOut<Bits> out{call.out, call.out_dtype != DType::f32};
  half_warp_shuffle_kernel<Load, Bits, kItems, kVec>
      <<<grid, c.block, 0, stream>>>(load, n, vectors, ws.partials, ws.counter, out);
  return cuda_launch_status(variant);
}

// Runs the entry of `List::instances` (HalfWarpShuffleInstance) matching (items, vector_width).
template <class List, class Load, class Bits, std::size_t... I>
Status dispatch_half_warp_shuffle(std::index_sequence<I...>, const Load& load, const ReduceCall& call,
                                  const WarpShuffleConfig& c, void* workspace, const char* variant) {
  Status result;
  const bool found =
      ((List::instances[I].items_per_thread == c.items_per_thread && List::instances[I].vector_width == c.vector_width
            ? (result = run_half_warp_shuffle<Load, Bits, List::instances[I].items_per_thread,
                                              List::instances[I].vector_width>(load, call.n, call, c, workspace, variant),
               true)
            : false) ||
       ...);
  if (!found)
    return Status::fail(ErrorKind::argument, std::string(variant) + ": items_per_thread=" +
                                                 std::to_string(c.items_per_thread) + " vector_width=" +
                                                 std::to_string(c.vector_width) + " is not instantiated");
  return result;
}

}  // namespace kiln::reduction
