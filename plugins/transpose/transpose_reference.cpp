#include "transpose_reference.hpp"

#include <cstdint>
#include <cstring>
#include <string>

namespace kiln::transpose {

Status transpose_reference(const Args& args, const Problem& problem) {
  (void)problem;
  if (args.tensor_count() != 2)
    return Status::fail(ErrorKind::argument,
                        "transpose reference: expected 2 tensors (in, out), got " + std::to_string(args.tensor_count()));
  for (int i = 0; i < 2; ++i)
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, "transpose reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
  const TensorRef& in = args.tensor(0);
  const TensorRef& out = args.tensor(1);
  const std::size_t size = dtype_size(in.dtype);
  if (in.dtype != out.dtype || (size != 2 && size != 4))
    return Status::fail(ErrorKind::dtype, "transpose reference: in and out of one 2- or 4-byte dtype, got " +
                                              in.to_string() + " and " + out.to_string());
  const std::int64_t m = in.rows(), n = in.cols();
  const auto* src = static_cast<const unsigned char*>(in.data);
  auto* dst = static_cast<unsigned char*>(out.data);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      std::memcpy(dst + static_cast<std::size_t>(out.offset(0, j, i)) * size,
                  src + static_cast<std::size_t>(in.offset(0, i, j)) * size, size);
  return Status::success();
}

}  // namespace kiln::transpose
