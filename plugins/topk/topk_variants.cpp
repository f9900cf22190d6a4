#include "topk_variants.hpp"

namespace kiln::topk {

TopkLaunch topk_launch_of(const Args& args, const Problem& p) {
  TopkLaunch l;
  const TensorRef& x = args.tensor(0);
  const TensorRef& values = args.tensor(1);
  const TensorRef& indices = args.tensor(2);
  l.x = x.as<const float>();
  l.x_stride = x.row_stride;
  l.values = values.as<float>();
  l.v_stride = values.row_stride;
  l.indices = indices.as<std::int32_t>();
  l.i_stride = indices.row_stride;
  l.rows = p.dims[0];
  l.n = p.dims[1];
  l.k = static_cast<int>(p.dims[2]);
  l.largest = p.dims[3] != 0 ? 1 : 0;
  return l;
}

Support topk_cuda_support(const Problem& p, std::int64_t max_k, const std::string& why_max) {
  if (p.align_bytes < 4) return Support::no("f32/i32 tensors not 4-byte aligned");
  if (p.dims[2] > max_k) return Support::no("k = " + std::to_string(p.dims[2]) + " > " + std::to_string(max_k) + ": " + why_max);
  return Support::yes();
}

}  // namespace kiln::topk
