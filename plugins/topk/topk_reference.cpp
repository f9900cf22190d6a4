#include "topk_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <kiln/dtype.hpp>

#include "topk_key.hpp"

namespace kiln::topk {

namespace {

KeyFormat format_of(DType t) { return t == f16 ? KeyFormat::f16 : t == bf16 ? KeyFormat::bf16 : KeyFormat::f32; }

// Element j of a row of `size`-byte elements, as bits.
std::uint32_t bits_at(const unsigned char* row, std::int64_t j, std::size_t size) {
  if (size == 4) {
    std::uint32_t b;
    std::memcpy(&b, row + 4 * j, 4);
    return b;
  }
  std::uint16_t h;
  std::memcpy(&h, row + 2 * j, 2);
  return h;
}

}  // namespace

Status topk_reference(const Args& args, const Problem& p) {
  const std::int64_t rows = p.dims[0], n = p.dims[1], k = p.dims[2];
  const bool largest = p.dims[3] != 0;
  const TensorRef& x = args.tensor(0);
  const TensorRef& values = args.tensor(1);
  const TensorRef& indices = args.tensor(2);
  const KeyFormat format = format_of(x.dtype);
  const std::size_t size = dtype_size(x.dtype);
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto* xr = static_cast<const unsigned char*>(x.data) + r * x.row_stride * std::int64_t(size);
    for (std::int64_t j = 0; j < n; ++j) {
      keys[j] = composite_key(bits_at(xr, j, size), static_cast<std::uint32_t>(j), largest, format);
    }
    std::partial_sort(keys.begin(), keys.begin() + k, keys.end(), std::greater<std::uint64_t>());
    auto* vr = static_cast<unsigned char*>(values.data) + r * values.row_stride * std::int64_t(size);
    std::int32_t* ir = indices.as<std::int32_t>() + r * indices.row_stride;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::uint32_t j = index_of(keys[i]);
      std::memcpy(vr + i * size, xr + std::size_t(j) * size, size);  // the bits, unchanged
      ir[i] = static_cast<std::int32_t>(j);
    }
  }
  return Status::success();
}

}  // namespace kiln::topk
