#include "register_scale_example.hpp"

#include <exception>

#include "scale_op.hpp"
#include "scale_variants.hpp"

namespace scale_example {

kiln::Status register_scale_example(kiln::Registry& registry) noexcept {
  try {
    registry.add_op(make_scale_schema());
    registry.add_variant(make_scale_host());
#if KILN_HAS_CUDA
    registry.add_variant(make_scale_cuda_grid_stride());
#endif
    return {};
  } catch (const std::exception& e) {  // nothing may cross the plugin boundary
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}

}  // namespace scale_example
