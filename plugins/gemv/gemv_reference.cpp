#include "gemv_reference.hpp"

#include <cstdint>
#include <string>

#include <kiln/op_schema.hpp>

namespace kiln::gemv {

Status gemv_reference(const Args& args, const Problem& problem) {
  (void)problem;
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "gemv reference: expected 3 tensors (a, x, y), got " + std::to_string(args.tensor_count()));
  for (int i = 0; i < 3; ++i)
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, "gemv reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
  const TensorRef& a = args.tensor(0);
  const TensorRef& y = args.tensor(2);
  const std::int64_t m = a.rows(), n = a.cols();
  if (a.dtype == DType::f32 && args.tensor(1).dtype == DType::f32 && y.dtype == DType::f32) {
    const float* x = args.tensor(1).as<const float>();
    float* yf = y.as<float>();
    for (std::int64_t i = 0; i < m; ++i) {
      const float* row = a.as<const float>() + i * a.row_stride;
      double acc = 0.0;
      for (std::int64_t j = 0; j < n; ++j) acc += static_cast<double>(row[j]) * static_cast<double>(x[j]);
      yf[i] = static_cast<float>(acc);
    }
    return Status::success();
  }
  // f16 / bf16 (any mix the schema allows): elements read exactly, the sum rounded to float as
  // the kernels' f32 result is, then to y's dtype (store_element: to nearest even).
  const TensorRef& x = args.tensor(1);
  for (std::int64_t i = 0; i < m; ++i) {
    double acc = 0.0;
    for (std::int64_t j = 0; j < n; ++j) acc += load_element(a, 0, i, j) * load_element(x, 0, 0, j);
    store_element(y, 0, 0, i, static_cast<double>(static_cast<float>(acc)));
  }
  return Status::success();
}

}  // namespace kiln::gemv
