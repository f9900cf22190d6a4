#include "register_elementwise.hpp"

#include <exception>
#include <string>

#include "add_host.hpp"
#include "add_schema.hpp"
#if KILN_HAS_CUDA
#include "add_cuda_variants.hpp"
#endif

kiln::Status register_elementwise(kiln::Registry& registry) {
  namespace ew = kiln::elementwise;
  try {
    registry.add_op(ew::make_add_schema());
    registry.add_variant(ew::make_add_host());
#if KILN_HAS_CUDA
    registry.add_variant(ew::make_add_streaming());
    registry.add_variant(ew::make_add_vectorized());
    registry.add_variant(ew::make_add_grid_stride());
    registry.add_variant(ew::make_add_2d());
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_elementwise: ") + e.what());
  }
}
