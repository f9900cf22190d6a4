// topk_grid_radix16: the adapter (support, workspace layout, grid sizing, the launch).
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "topk_grid_radix16.cuh"
#include "topk_grid_radix16_params.hpp"
#include "topk_resident_grid.hpp"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

template <class T, int BLOCK, int HOLD>
cudaError_t launch_as(const TopkLaunch& l, const Radix16Layout& r, int min_vecs, void* workspace, cudaStream_t stream) {
  const void* fn = reinterpret_cast<const void*>(&grid_radix16_kernel<T, BLOCK, HOLD>);
  const int resident = resident_grid(fn, BLOCK, 0);
  const Radix16Plan plan = radix16_plan(l.rows, l.n, BLOCK, min_vecs, resident);
  if (plan.blocks_per_row < 1 || plan.blocks_per_row > r.max_blocks_per_row) return cudaErrorCooperativeLaunchTooLarge;
  auto* bytes = static_cast<unsigned char*>(workspace);
  auto* header = reinterpret_cast<std::uint32_t*>(bytes);
  auto* block_bins = reinterpret_cast<std::uint32_t*>(bytes + r.header_bytes);
  auto* cands = reinterpret_cast<std::uint64_t*>(bytes + r.header_bytes + r.block_bins_bytes);
  const T* x = static_cast<const T*>(l.x);
  T* values = static_cast<T*>(l.values);
  std::int32_t* indices = l.indices;
  std::int64_t x_stride = l.x_stride, n = l.n, v_stride = l.v_stride, i_stride = l.i_stride;
  std::int64_t vecs = plan.vecs_per_thread;
  int largest = l.largest, k = l.k, per_row = plan.blocks_per_row;
  void* args[] = {&x,      &x_stride,   &n,     &largest, &k,       &per_row,  &vecs,
                  &header, &block_bins, &cands, &values,  &v_stride, &indices,  &i_stride};
  return cudaLaunchCooperativeKernel(fn, dim3(unsigned(l.rows * per_row)), dim3(BLOCK), args, 0, stream);
}

template <int BLOCK, int HOLD>
cudaError_t launch_tile(const TopkLaunch& l, const Radix16Layout& r, int min_vecs, void* ws, cudaStream_t s) {
  if (l.dtype == DType::f16) return launch_as<__half, BLOCK, HOLD>(l, r, min_vecs, ws, s);
  return launch_as<__nv_bfloat16, BLOCK, HOLD>(l, r, min_vecs, ws, s);
}

class GridRadix16 final : public Variant {
 public:
  GridRadix16()
      : Variant(VariantDesc{"topk_grid_radix16", "topk", DeviceKind::cuda, {f16, bf16}, 44,
                            "f16/bf16 rows spread over the resident grid (runs of 16 bytes held in registers): "
                            "the k-th value exactly from two byte-wide histogram passes (grid barriers), one "
                            "append pass, its tie class placed in index order, the keys above it ordered by "
                            "counting",
                            false, false},
                grid_radix16_space()) {}
  Config default_config(const DeviceInfo& d) const override { return grid_radix16_default(d); }
  Support supports(const Problem& p, const DeviceInfo& d, const Config&) const override {
    if (Support s = topk_cuda_support(p, kRadix16MaxK, "the keys above the k-th value are ordered in 32 KiB of shared memory");
        !s.ok)
      return s;
    return grid_radix16_supports(p.dtype, p.dims[0], p.dims[1], p.dims[2], d);
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override {
    return radix16_layout(p.dims[0], p.dims[1], p.dims[2], c.get_or("block", 512), c.get_or("min_vecs", 2)).total();
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (l.dtype != DType::f16 && l.dtype != DType::bf16)
      return Status::fail(ErrorKind::argument, "topk_grid_radix16: x must be f16 or bf16");
    if (Status st = topk_check_indices(l, "topk_grid_radix16"); !st.ok()) return st;
    if (workspace == nullptr) return Status::fail(ErrorKind::argument, "topk_grid_radix16: no workspace given");
    const int block = c.get_or("block", 512), hold = c.get_or("hold", 4), min_vecs = c.get_or("min_vecs", 2);
    auto* s = static_cast<cudaStream_t>(stream.handle());
    const Radix16Layout r = radix16_layout(l.rows, l.n, l.k, block, min_vecs);
    cudaError_t e;
    if (block == 256 && hold == 2) e = launch_tile<256, 2>(l, r, min_vecs, workspace, s);
    else if (block == 256 && hold == 4) e = launch_tile<256, 4>(l, r, min_vecs, workspace, s);
    else if (block == 512 && hold == 2) e = launch_tile<512, 2>(l, r, min_vecs, workspace, s);
    else if (block == 512 && hold == 4) e = launch_tile<512, 4>(l, r, min_vecs, workspace, s);
    else
      return Status::fail(ErrorKind::argument, "topk_grid_radix16: block = " + std::to_string(block) +
                                                   ", hold = " + std::to_string(hold) + " is not instantiated");
    if (e == cudaErrorCooperativeLaunchTooLarge)
      return Status::fail(ErrorKind::cuda, "topk_grid_radix16: rows = " + std::to_string(l.rows) +
                                               " do not fit the device's resident grid (a block each)");
    if (e != cudaSuccess)
      return Status::fail(ErrorKind::cuda, std::string("topk_grid_radix16: ") + cudaGetErrorString(e));
    return Status::success();
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_grid_radix16() { return std::make_shared<GridRadix16>(); }

}  // namespace kiln::topk
