// The op schemas of the histogram family (contracts in README.md):
//   histogram(data: in u8[n], bins: out u32[256])                      dims {n}
//   histogram_range(data: in f32[n], bins: out u32[nbins]; lo=0, hi=1)  dims {n, bins}
#pragma once
#include <memory>

#include <kiln/op_schema.hpp>

namespace kiln::histogram {

std::shared_ptr<OpSchema> make_histogram_schema();
std::shared_ptr<OpSchema> make_histogram_range_schema();

}  // namespace kiln::histogram
