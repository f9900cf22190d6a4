#include "gemv_reference.hpp"

#include <cstdint>
#include <string>

namespace kiln::gemv {

Status gemv_reference(const Args& args, const Problem& problem) {
  (void)problem;
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "gemv reference: expected 3 tensors (a, x, y), got " + std::to_string(args.tensor_count()));
  for (int i = 0; i < 3; ++i) {
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, "gemv reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
    if (args.tensor(i).dtype != DType::f32)
      return Status::fail(ErrorKind::dtype, "gemv reference: f32 only, got " + args.tensor(i).to_string());
  }
  const TensorRef& a = args.tensor(0);
  const float* x = args.tensor(1).as<const float>();
  float* y = args.tensor(2).as<float>();
  const std::int64_t m = a.rows(), n = a.cols();
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = a.as<const float>() + i * a.row_stride;
    double acc = 0.0;
    for (std::int64_t j = 0; j < n; ++j) acc += static_cast<double>(row[j]) * static_cast<double>(x[j]);
    y[i] = static_cast<float>(acc);
  }
  return Status::success();
}

}  // namespace kiln::gemv
