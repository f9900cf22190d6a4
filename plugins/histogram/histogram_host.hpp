// The host variants `histogram_host` and `histogram_range_host`: the schema's reference run on
// host tensors, so op() works without a GPU and the tuner has its oracle.
#pragma once
#include <memory>

#include <kiln/variant.hpp>

namespace kiln::histogram {

std::shared_ptr<Variant> make_histogram_host();
std::shared_ptr<Variant> make_histogram_range_host();

}  // namespace kiln::histogram
