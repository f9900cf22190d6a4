// The tensors of a `gemv` call as raw pointers, extents and A's row stride (elements), the form
// every kernel takes.
#pragma once
#include <cstdint>

#include <kiln/args.hpp>

namespace kiln::gemv {

struct GemvOperands {
  const float* a = nullptr;
  const float* x = nullptr;
  float* y = nullptr;
  std::int64_t m = 0, n = 0;
  std::int64_t lda = 0;  // row stride of A in elements
};

// args = {a, x, y}, already validated by the schema.
inline GemvOperands gemv_operands(const Args& args) {
  const TensorRef& a = args.tensor(0);
  GemvOperands o;
  o.a = a.as<const float>();
  o.x = args.tensor(1).as<const float>();
  o.y = args.tensor(2).as<float>();
  o.m = a.rows();
  o.n = a.cols();
  o.lda = a.row_stride;
  return o;
}

// The f16 / bf16 form: elements as their 16-bit patterns; y is f32 or the input dtype (y16).
struct GemvHalfOperands {
  const unsigned short* a = nullptr;
  const unsigned short* x = nullptr;
  void* y = nullptr;
  bool y_half = false;  // y holds the input dtype, else f32
  std::int64_t m = 0, n = 0;
  std::int64_t lda = 0;
};

inline GemvHalfOperands gemv_half_operands(const Args& args) {
  const TensorRef& a = args.tensor(0);
  GemvHalfOperands o;
  o.a = a.as<const unsigned short>();
  o.x = args.tensor(1).as<const unsigned short>();
  o.y = args.tensor(2).data;
  o.y_half = args.tensor(2).dtype != DType::f32;
  o.m = a.rows();
  o.n = a.cols();
  o.lda = a.row_stride;
  return o;
}

}  // namespace kiln::gemv
