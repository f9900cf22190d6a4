#include "transpose_reference.hpp"

#include <cstdint>
#include <string>

namespace kiln::transpose {

Status transpose_reference(const Args& args, const Problem& problem) {
  (void)problem;
  if (args.tensor_count() != 2)
    return Status::fail(ErrorKind::argument,
                        "transpose reference: expected 2 tensors (in, out), got " + std::to_string(args.tensor_count()));
  for (int i = 0; i < 2; ++i) {
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, "transpose reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
    if (args.tensor(i).dtype != DType::f32)
      return Status::fail(ErrorKind::dtype, "transpose reference: f32 only, got " + args.tensor(i).to_string());
  }
  const TensorRef& in = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  const std::int64_t m = in.rows(), n = in.cols();
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = in.as<const float>() + i * in.row_stride;
    for (std::int64_t j = 0; j < n; ++j) out.as<float>()[j * out.row_stride + i] = row[j];
  }
  return Status::success();
}

}  // namespace kiln::transpose
