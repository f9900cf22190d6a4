#include "register_topk.hpp"

#include <exception>
#include <string>

#include "topk_host.hpp"
#include "topk_schema.hpp"
#if KILN_HAS_CUDA
#include "topk_variants.hpp"
#endif

kiln::Status register_topk(kiln::Registry& registry) {
  try {
    registry.add_op(kiln::topk::make_topk_schema());
    registry.add_variant(kiln::topk::make_topk_host());
#if KILN_HAS_CUDA
    registry.add_variant(kiln::topk::make_topk_block_merge());
    registry.add_variant(kiln::topk::make_topk_grid_radix16());
    registry.add_variant(kiln::topk::make_topk_grid_select());
    registry.add_variant(kiln::topk::make_topk_radix_select());
    registry.add_variant(kiln::topk::make_topk_row_select());
    registry.add_variant(kiln::topk::make_topk_sample_select());
    registry.add_variant(kiln::topk::make_topk_warp_select());
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_topk: ") + e.what());
  }
}
