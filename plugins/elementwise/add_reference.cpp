#include "add_reference.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

#include <kiln/half.hpp>

namespace kiln::elementwise {
namespace {

template <class T>
T add_one(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    // Wrap like the device does; signed overflow would be undefined in C++.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
  } else {
    return x + y;
  }
}

template <class T>
void add_rows(const TensorRef& a, const TensorRef& b, const TensorRef& c) {
  const std::int64_t rows = c.rows(), cols = c.cols();
  // rank 1 has a single row, so its row stride is never used.
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* ar = a.as<const T>() + r * a.row_stride;
    const T* br = b.as<const T>() + r * b.row_stride;
    T* cr = c.as<T>() + r * c.row_stride;
    for (std::int64_t j = 0; j < cols; ++j) cr[j] = add_one(ar[j], br[j]);
  }
}

// f16 / bf16 (stored as bit patterns): added in fp32, rounded once to nearest even, as the GPU does.
template <std::uint16_t (*kToBits)(float), float (*kFromBits)(std::uint16_t)>
void add_half_rows(const TensorRef& a, const TensorRef& b, const TensorRef& c) {
  const std::int64_t rows = c.rows(), cols = c.cols();
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint16_t* ar = a.as<const std::uint16_t>() + r * a.row_stride;
    const std::uint16_t* br = b.as<const std::uint16_t>() + r * b.row_stride;
    std::uint16_t* cr = c.as<std::uint16_t>() + r * c.row_stride;
    for (std::int64_t j = 0; j < cols; ++j) cr[j] = kToBits(kFromBits(ar[j]) + kFromBits(br[j]));
  }
}

}  // namespace

double add_half_element(DType dtype, std::uint16_t a, std::uint16_t b) {
  if (dtype == DType::f16) return f16_to_float(float_to_f16(f16_to_float(a) + f16_to_float(b)));
  return bf16_to_float(float_to_bf16(bf16_to_float(a) + bf16_to_float(b)));
}

Status add_reference(const Args& args, const Problem& problem) {
  if (args.tensor_count() != 3)
    return Status::fail(ErrorKind::argument,
                        "add reference: expected 3 tensors (a, b, c), got " + std::to_string(args.tensor_count()));
  const TensorRef& a = args.tensor(0);
  const TensorRef& b = args.tensor(1);
  const TensorRef& c = args.tensor(2);
  for (int i = 0; i < 3; ++i)
    if (!args.tensor(i).device.is_host())
      return Status::fail(ErrorKind::device, "add reference: tensors must be in host memory, got " +
                                                 args.tensor(i).to_string());
  if (c.numel() == 0) return Status::success();
  switch (problem.dtype) {
    case DType::f32: add_rows<float>(a, b, c); break;
    case DType::f64: add_rows<double>(a, b, c); break;
    case DType::i32: add_rows<std::int32_t>(a, b, c); break;
    case DType::f16: add_half_rows<float_to_f16, f16_to_float>(a, b, c); break;
    case DType::bf16: add_half_rows<float_to_bf16, bf16_to_float>(a, b, c); break;
    default:
      return Status::fail(ErrorKind::dtype,
                          "add reference: dtype " + std::string(dtype_name(problem.dtype)) + " is not supported");
  }
  return Status::success();
}

}  // namespace kiln::elementwise
