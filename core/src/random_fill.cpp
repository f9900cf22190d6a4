// kiln::fill_random: the counter-based input generator (see input_distribution.hpp).  The host
// loop splits large tensors over a few threads; CUDA tensors are filled by a kernel.
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "kiln/errors.hpp"
#include "random_fill.hpp"
#include "view_check.hpp"

namespace kiln {

InputDistribution InputDistribution::default_for(DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16: return real(-1.0, 1.0);
    case DType::u8: return integer(0, 255);
    case DType::u32: return integer(0, 1000);
    case DType::i32:
    case DType::i64: return integer(-1000, 1000);
  }
  return real(-1.0, 1.0);
}

namespace detail {

CounterFill make_counter_fill(DType dtype, const InputDistribution& d, std::uint64_t seed) {
  CounterFill f{};
  f.key = counter_key(seed);
  f.dtype_code = static_cast<int>(dtype);
  const bool float_type = dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16;
  if (!(std::isfinite(d.lo) && std::isfinite(d.hi)))
    throw ArgumentError("fill_random: distribution bounds must be finite");
  if (d.kind == InputDistribution::Kind::uniform_real) {
    if (!float_type)
      throw ArgumentError("fill_random: a uniform real distribution cannot fill a " + std::string(dtype_name(dtype)) +
                          " tensor (use InputDistribution::integer)");
    if (!(d.hi > d.lo)) throw ArgumentError("fill_random: empty real range [lo, hi): hi must exceed lo");
    f.is_real = true;
    f.lo = d.lo;
    f.width = d.hi - d.lo;
    return f;
  }
  if (dtype == DType::f16 || dtype == DType::bf16)
    throw ArgumentError("fill_random: integer distributions are not supported for " + std::string(dtype_name(dtype)));
  if (d.hi < d.lo || d.lo != std::floor(d.lo) || d.hi != std::floor(d.hi))
    throw ArgumentError("fill_random: an integer range [lo, hi] needs integral lo <= hi");
  f.is_real = false;
  f.ilo = static_cast<std::int64_t>(d.lo);
  f.range = static_cast<std::uint64_t>(static_cast<std::int64_t>(d.hi) - f.ilo) + 1;
  return f;
}

}  // namespace detail

void fill_random(const TensorRef& view, const InputDistribution& d, std::uint64_t seed) {
  // A hand-made view (null or wild pointer, negative or overlapping strides, a span past the end
  // of the address space) is refused before the loops below write through it.
  detail::check_view(view, "fill_random: argument 't'", detail::ViewCheck{/*element_aligned=*/true});
  if (view.shape.rank >= 2 && view.col_stride != 1 && view.cols() > 1)
    throw ArgumentError("fill_random: tensor " + view.to_string() + " must be row-major (column stride 1)");
  // A rank-3 tensor is filled as the (batch * rows) x cols matrix it is stored as, so element
  // counters, and so the bits, do not depend on how the batch is viewed.
  TensorRef t = view;
  if (view.shape.rank == 3) {
    if (view.batch() > 1 && view.batch_stride != view.rows() * view.row_stride)
      throw ArgumentError("fill_random: tensor " + view.to_string() + " must be a dense stack of matrices");
    t.shape = Shape::matrix(view.batch() * view.rows(), view.cols());
    t.batch_stride = 0;
  }
  const detail::CounterFill fill = detail::make_counter_fill(t.dtype, d, seed);
  if (t.numel() == 0) return;
  if (t.device.is_cuda()) {
    detail::cuda_fill_random(t, fill);
    return;
  }
  const std::int64_t rows = t.rows(), cols = t.cols();
  const std::size_t esize = dtype_size(t.dtype);
  auto fill_rows = [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      char* row = static_cast<char*>(t.data) + static_cast<std::size_t>(r * t.row_stride) * esize;
      for (std::int64_t c = c0; c < c1; ++c)
        detail::counter_fill_element(fill, static_cast<std::uint64_t>(r * cols + c), row + static_cast<std::size_t>(c) * esize);
    }
  };
  // Threads only pay off for large tensors: split rows, or the columns of a single row.
  const std::int64_t total = rows * cols;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int threads = total < (std::int64_t{1} << 20) ? 1 : static_cast<int>(std::min<unsigned>(hw, 16u));
  if (threads == 1) {
    fill_rows(0, rows, 0, cols);
    return;
  }
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    if (rows >= threads) {
      pool.emplace_back(fill_rows, rows * i / threads, rows * (i + 1) / threads, 0, cols);
    } else {
      pool.emplace_back([&, i] {
        for (std::int64_t r = 0; r < rows; ++r) fill_rows(r, r + 1, cols * i / threads, cols * (i + 1) / threads);
      });
    }
  }
  for (auto& th : pool) th.join();
}

}  // namespace kiln
