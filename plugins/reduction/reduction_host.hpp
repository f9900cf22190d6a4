// The host variants dot_host and reduce_sum_host: the references (priority 0, reference=true),
// so op() works on host tensors and without a GPU.
//
//   registry.add_variant(kiln::reduction::make_dot_host());
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::reduction {

std::shared_ptr<const Variant> make_dot_host();
std::shared_ptr<const Variant> make_reduce_sum_host();

}  // namespace kiln::reduction
