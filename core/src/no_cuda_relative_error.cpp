// Host-only builds: CUDA tensors cannot exist, so this is never reached through relative_error.
#include "device_compare.hpp"
#include "kiln/errors.hpp"

namespace kiln::detail {

double cuda_relative_error(const TensorRef&, const TensorRef&) {
  throw DeviceError("relative_error: kiln was built without CUDA");
}

}  // namespace kiln::detail
