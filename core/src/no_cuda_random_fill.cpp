// Host-only builds: a CUDA tensor cannot exist, so this is never reached through fill_random.
#include "kiln/errors.hpp"
#include "random_fill.hpp"

namespace kiln::detail {

void cuda_fill_random(const TensorRef&, const CounterFill&) {
  throw DeviceError("fill_random: kiln was built without CUDA");
}

}  // namespace kiln::detail
