#include "kiln/args.hpp"

#include <string>

#include "kiln/errors.hpp"

namespace kiln {

Args::Args(std::initializer_list<TensorRef> tensors) {
  for (const TensorRef& t : tensors) push_tensor(t);
}

Args::Args(std::initializer_list<TensorRef> tensors, std::initializer_list<double> scalars) : Args(tensors) {
  for (double s : scalars) push_scalar(s);
}

void Args::push_tensor(const TensorRef& t) {
  if (n_tensors_ >= kMaxTensors)
    throw ArgumentError("Args: at most " + std::to_string(kMaxTensors) + " tensors");
  tensors_[n_tensors_++] = t;
}

void Args::set_scalar(int i, double v) {
  if (i < 0 || i >= n_scalars_)
    throw ArgumentError("Args::set_scalar: index " + std::to_string(i) + " is not one of the " +
                        std::to_string(n_scalars_) + " scalars");
  scalars_[i] = v;
}

void Args::resize_scalars(int n) {
  if (n < 0 || n > kMaxScalars)
    throw ArgumentError("Args::resize_scalars: " + std::to_string(n) + " scalars, expected 0 to " +
                        std::to_string(kMaxScalars));
  for (int i = n_scalars_; i < n; ++i) scalars_[i] = 0.0;
  n_scalars_ = n;
}

void Args::push_scalar(double v) {
  if (n_scalars_ >= kMaxScalars)
    throw ArgumentError("Args: at most " + std::to_string(kMaxScalars) + " scalars");
  scalars_[n_scalars_++] = v;
}

}  // namespace kiln
