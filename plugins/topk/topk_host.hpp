// The host variant `topk_host`: the schema's reference run on host tensors, so op() works
// without a GPU and the tuner has its oracle.
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::topk {

std::shared_ptr<Variant> make_topk_host();

}  // namespace kiln::topk
