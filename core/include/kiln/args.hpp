// Args: what an op call receives — tensor views in the order of the op's tensor roles, then
// numeric scalars in the order of its scalar roles (missing trailing scalars take the schema's
// defaults).  Fixed capacity, so building Args on the hot path allocates nothing.
//
//   rt.op("gemm")({a, b, c}, stream);                          // alpha = 1, beta = 0
//   rt.op("gemm")(kiln::Args({a, b, c}, {2.0, 0.5}), stream);  // alpha = 2, beta = 0.5
#pragma once
#include <cstddef>
#include <initializer_list>

#include "kiln/tensor_ref.hpp"

namespace kiln {

class Args {
 public:
  static constexpr int kMaxTensors = 8;
  static constexpr int kMaxScalars = 6;

  Args() = default;
  Args(std::initializer_list<TensorRef> tensors);
  Args(std::initializer_list<TensorRef> tensors, std::initializer_list<double> scalars);

  int tensor_count() const { return n_tensors_; }
  int scalar_count() const { return n_scalars_; }
  const TensorRef& tensor(int i) const { return tensors_[i]; }
  TensorRef& tensor(int i) { return tensors_[i]; }
  double scalar(int i) const { return scalars_[i]; }
  void push_tensor(const TensorRef& t);   // throws ArgumentError past kMaxTensors
  void push_scalar(double v);             // throws ArgumentError past kMaxScalars
  // tensor(i) and scalar(i) are unchecked, like operator[]: i < tensor_count() / scalar_count().
  // The two below write, so they check (ArgumentError): set_scalar's i must name an existing
  // scalar, [0, scalar_count()); resize_scalars' n lies in [0, kMaxScalars].
  void set_scalar(int i, double v);
  void resize_scalars(int n);   // new scalars are 0

 private:
  TensorRef tensors_[kMaxTensors];
  double scalars_[kMaxScalars] = {};
  int n_tensors_ = 0;
  int n_scalars_ = 0;
};

}  // namespace kiln
