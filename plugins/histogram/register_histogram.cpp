#include "register_histogram.hpp"

#include <exception>
#include <string>

#include "histogram_host.hpp"
#include "histogram_schema.hpp"
#if KILN_HAS_CUDA
#include "histogram_variants.hpp"
#endif

kiln::Status register_histogram(kiln::Registry& registry) {
  try {
    registry.add_op(kiln::histogram::make_histogram_schema());
    registry.add_op(kiln::histogram::make_histogram_range_schema());
    registry.add_variant(kiln::histogram::make_histogram_host());
    registry.add_variant(kiln::histogram::make_histogram_range_host());
#if KILN_HAS_CUDA
    kiln::histogram::add_histogram_cuda_variants(registry);
#endif
    return kiln::Status::success();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, std::string("register_histogram: ") + e.what());
  }
}
