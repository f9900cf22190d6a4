#include "topk_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "topk_key.hpp"

namespace kiln::topk {

Status topk_reference(const Args& args, const Problem& p) {
  const std::int64_t rows = p.dims[0], n = p.dims[1], k = p.dims[2];
  const bool largest = p.dims[3] != 0;
  const TensorRef& x = args.tensor(0);
  const TensorRef& values = args.tensor(1);
  const TensorRef& indices = args.tensor(2);
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x.as<const float>() + r * x.row_stride;
    for (std::int64_t j = 0; j < n; ++j) {
      std::uint32_t bits;
      std::memcpy(&bits, xr + j, sizeof bits);
      keys[j] = composite_key(bits, static_cast<std::uint32_t>(j), largest);
    }
    std::partial_sort(keys.begin(), keys.begin() + k, keys.end(), std::greater<std::uint64_t>());
    float* vr = values.as<float>() + r * values.row_stride;
    std::int32_t* ir = indices.as<std::int32_t>() + r * indices.row_stride;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::uint32_t j = index_of(keys[i]);
      vr[i] = xr[j];
      ir[i] = static_cast<std::int32_t>(j);
    }
  }
  return Status::success();
}

}  // namespace kiln::topk
