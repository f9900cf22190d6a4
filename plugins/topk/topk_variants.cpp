#include "topk_variants.hpp"

#include <cstdint>
#include <string>

namespace kiln::topk {

TopkLaunch topk_launch_of(const Args& args, const Problem& p) {
  TopkLaunch l;
  const TensorRef& x = args.tensor(0);
  const TensorRef& values = args.tensor(1);
  const TensorRef& indices = args.tensor(2);
  l.dtype = x.dtype;
  l.x = x.data;
  l.x_stride = x.row_stride;
  l.values = values.data;
  l.v_stride = values.row_stride;
  l.indices = indices.as<std::int32_t>();
  l.i_stride = indices.row_stride;
  l.rows = p.dims[0];
  l.n = p.dims[1];
  l.k = static_cast<int>(p.dims[2]);
  l.largest = p.dims[3] != 0 ? 1 : 0;
  return l;
}

Status topk_check_indices(const TopkLaunch& l, const std::string& variant) {
  if (reinterpret_cast<std::uintptr_t>(l.indices) % 4 != 0)
    return Status::fail(ErrorKind::argument, variant + ": indices (i32) must be 4-byte aligned");
  return Status::success();
}

Support topk_cuda_support(const Problem& p, std::int64_t max_k, const std::string& why_max) {
  // f32: every tensor 4-byte aligned.  f16/bf16: the 2-byte elements need 2; the indices, whose
  // alignment the problem's (the minimum over all tensors) no longer shows, are checked at launch.
  const int need = p.dtype == f32 ? 4 : 2;
  if (p.align_bytes < need) return Support::no("tensors not " + std::to_string(need) + "-byte aligned");
  if (p.dims[2] > max_k) return Support::no("k = " + std::to_string(p.dims[2]) + " > " + std::to_string(max_k) + ": " + why_max);
  return Support::yes();
}

}  // namespace kiln::topk
