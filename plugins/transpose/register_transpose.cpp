#include "register_transpose.hpp"

#include <exception>
#include <string>

#include "transpose_host.hpp"
#include "transpose_schema.hpp"
#if KILN_HAS_CUDA
#include "transpose_cuda_variants.hpp"
#endif

kiln::Status register_transpose(kiln::Registry& registry) {
  namespace tr = kiln::transpose;
  try {
    registry.add_op(tr::make_transpose_schema());
    registry.add_variant(tr::make_transpose_host());
#if KILN_HAS_CUDA
    registry.add_variant(tr::make_transpose_skinny());
    registry.add_variant(tr::make_transpose_tiled_multirow());
    registry.add_variant(tr::make_transpose_tiled_padded());
    registry.add_variant(tr::make_transpose_write_coalesced());
    registry.add_variant(tr::make_transpose_naive_2d());
    registry.add_variant(tr::make_transpose_read_coalesced());
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_transpose: ") + e.what());
  }
}
