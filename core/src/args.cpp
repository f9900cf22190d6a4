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

void Args::push_scalar(double v) {
  if (n_scalars_ >= kMaxScalars)
    throw ArgumentError("Args: at most " + std::to_string(kMaxScalars) + " scalars");
  scalars_[n_scalars_++] = v;
}

}  // namespace kiln
