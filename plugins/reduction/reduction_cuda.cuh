// Host-side launch templates shared by the .cu files: CUDA errors as Status, the ladder's launch
// sequences, and the warp_shuffle table from an instance list.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <kiln/cuda_status.hpp>
#include <kiln/errors.hpp>

#include "reduction_kernels.cuh"
#include "reduction_launch.hpp"
#include "reduction_params.hpp"

namespace kiln::reduction {

// Where the pieces of the workspace are (see kWorkspaceHeaderBytes).
template <class Acc>
struct WorkspaceView {
  unsigned* counter;
  Acc* partials;
  explicit WorkspaceView(void* ws)
      : counter(static_cast<unsigned*>(ws)),
        partials(ws ? reinterpret_cast<Acc*>(static_cast<unsigned char*>(ws) + kWorkspaceHeaderBytes) : nullptr) {}
};

// One rung of the ladder for one (load, accumulator, output) combination.  Every rung but atomic
// needs a workspace; every launch is on `stream` and nothing waits.  kahan is last_block's
// launch with a KahanAcc.
template <Ladder kLadder, class Load, class Acc, class Out>
Status run_ladder(const Load& load, std::int64_t n, Out* out, const LadderConfig& c, int sm_count, void* workspace,
                  cudaStream_t stream, const char* variant) {
  const int grid = ladder_grid(n, c, sm_count);
  const int block = c.block;
  const std::size_t smem = static_cast<std::size_t>(block) * sizeof(Acc);
  if (kLadder != Ladder::atomic && workspace == nullptr)
    return Status::fail(ErrorKind::argument, std::string(variant) + ": needs a workspace");
  const WorkspaceView<Acc> ws(workspace);
  if constexpr (kLadder == Ladder::interleaved || kLadder == Ladder::sequential) {
    using Tree = std::conditional_t<kLadder == Ladder::interleaved, InterleavedTree, SequentialTree>;
    tree_reduce_kernel<Load, Acc, Tree, ToPartials<Acc>>
        <<<grid, block, smem, stream>>>(load, n, ToPartials<Acc>{ws.partials});
    tree_reduce_kernel<PartialsLoad<Acc>, Acc, Tree, ToOut<Acc, Out>>
        <<<1, block, smem, stream>>>(PartialsLoad<Acc>{ws.partials}, grid, ToOut<Acc, Out>{out});
  } else if constexpr (kLadder == Ladder::two_pass) {
    tree_reduce_kernel<Load, Acc, SequentialTree, ToPartials<Acc>>
        <<<grid, block, smem, stream>>>(load, n, ToPartials<Acc>{ws.partials});
    add_in_order_kernel<Acc, Out><<<1, 1, 0, stream>>>(ws.partials, grid, out);
  } else if constexpr (kLadder == Ladder::atomic) {
    if (Status s = cuda_status(cudaMemsetAsync(out, 0, sizeof(Out), stream), std::string(variant) + ": cudaMemsetAsync"); !s.ok())
      return s;
    tree_reduce_kernel<Load, Acc, SequentialTree, AtomicToOut<Acc, Out>>
        <<<grid, block, smem, stream>>>(load, n, AtomicToOut<Acc, Out>{out});
  } else {  // last_block, kahan
    if (Status s = cuda_status(cudaMemsetAsync(ws.counter, 0, sizeof(unsigned), stream), std::string(variant) + ": cudaMemsetAsync");
        !s.ok())
      return s;
    tree_reduce_kernel<Load, Acc, SequentialTree, LastBlockToOut<Acc, Out*>>
        <<<grid, block, smem, stream>>>(load, n, LastBlockToOut<Acc, Out*>{ws.partials, ws.counter, out});
  }
  return cuda_launch_status(variant);
}

// Every rung for one (load, output) pair with plain accumulator Acc; kahan only when kKahan.
template <class Load, class Acc, class Out, bool kKahan>
Status run_ladder_rung(Ladder ladder, const Load& load, std::int64_t n, Out* out, const LadderConfig& c,
                       int sm_count, void* workspace, cudaStream_t stream, const char* variant) {
  switch (ladder) {
    case Ladder::interleaved:
      return run_ladder<Ladder::interleaved, Load, Acc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
    case Ladder::sequential:
      return run_ladder<Ladder::sequential, Load, Acc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
    case Ladder::two_pass:
      return run_ladder<Ladder::two_pass, Load, Acc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
    case Ladder::atomic:
      return run_ladder<Ladder::atomic, Load, Acc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
    case Ladder::last_block:
      return run_ladder<Ladder::last_block, Load, Acc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
    case Ladder::kahan:
      if constexpr (kKahan)
        return run_ladder<Ladder::kahan, Load, KahanAcc, Out>(load, n, out, c, sm_count, workspace, stream, variant);
      break;
  }
  return Status::fail(ErrorKind::unsupported, std::string(variant) + ": not available for this dtype");
}

// warp_shuffle for one instantiated (items, vector width, accumulator).
template <class Load, class Acc, class Out, int kItems, int kVec>
Status run_warp_shuffle(const Load& load, std::int64_t n, Out* out, const WarpShuffleConfig& c, int sm_count,
                        void* workspace, cudaStream_t stream, const char* variant) {
  if (workspace == nullptr) return Status::fail(ErrorKind::argument, std::string(variant) + ": needs a workspace");
  const WorkspaceView<Acc> ws(workspace);
  const int grid = warp_shuffle_grid(n, c, sm_count);
  if (Status s = cuda_status(cudaMemsetAsync(ws.counter, 0, sizeof(unsigned), stream), std::string(variant) + ": cudaMemsetAsync");
      !s.ok())
    return s;
  warp_shuffle_kernel<Load, Acc, Out, kItems, kVec><<<grid, c.block, 0, stream>>>(load, n, ws.partials, ws.counter, out);
  return cuda_launch_status(variant);
}

// Calls the instantiation of `List::instances` (a constexpr std::array of WarpShuffleInstance)
// that matches the config.  T is the element type (float or int); i32 ignores acc_double, so
// its duplicate entries name the same instantiation.
template <class List, class Load, class T, std::size_t... I>
Status dispatch_warp_shuffle(std::index_sequence<I...>, const Load& load, std::int64_t n, T* out,
                             const WarpShuffleConfig& c, int sm_count, void* workspace, cudaStream_t stream,
                             const char* variant) {
  Status result;
  const bool found =
      ((List::instances[I].items_per_thread == c.items_per_thread && List::instances[I].vector_width == c.vector_width &&
                (List::instances[I].acc_double != 0) == c.acc_double
            ? (result = run_warp_shuffle<Load, PlainAccFor<T, List::instances[I].acc_double != 0>, T,
                                         List::instances[I].items_per_thread, List::instances[I].vector_width>(
                   load, n, out, c, sm_count, workspace, stream, variant),
               true)
            : false) ||
       ...);
  if (!found)
    return Status::fail(ErrorKind::argument, std::string(variant) + ": items_per_thread=" +
                                                 std::to_string(c.items_per_thread) + " vector_width=" +
                                                 std::to_string(c.vector_width) + " acc_double=" +
                                                 std::to_string(int{c.acc_double}) + " is not instantiated");
  return result;
}

}  // namespace kiln::reduction
