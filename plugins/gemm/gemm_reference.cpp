#include "gemm_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "kiln/op_schema.hpp"

namespace kiln::gemm {

namespace {

bool is_input_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// The matrix of batch entry `bi` as row-major floats: the view itself when it is f32 with unit
// column stride, else a packed copy in `storage` (f16 and bf16 are exact in float).
const float* as_row_major_floats(const TensorRef& t, std::int64_t bi, std::vector<float>& storage, std::int64_t& ld) {
  const TensorRef mtx = t.matrix_at(t.shape.rank == 3 ? bi : 0);
  if (mtx.dtype == DType::f32 && mtx.row_major()) {
    ld = mtx.shape.rank == 2 ? mtx.row_stride : mtx.cols();
    return mtx.as<const float>();
  }
  const std::int64_t rows = mtx.rows(), cols = mtx.cols();
  storage.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t col = 0; col < cols; ++col)
      storage[static_cast<std::size_t>(r * cols + col)] = static_cast<float>(load_element(mtx, 0, r, col));
  ld = cols;
  return storage.data();
}

// The product of row-major float panels into one C matrix (any dtype, row-major or not).
Status gemm_reference_f32(const float* pa, std::int64_t lda, const float* pb, std::int64_t ldb, const TensorRef& cm,
                          std::int64_t m, std::int64_t n, std::int64_t k, double alpha, double beta) {
  // kRows rows of C accumulate together, so each k-panel of B (kDepth rows) is read from
  // cache kRows times instead of once per row from memory.  Row blocks are shared out among
  // threads for large problems; each element is summed in the same order whatever the thread
  // count, so the result does not depend on it.
  constexpr std::int64_t kRows = 16, kDepth = 128;
  const std::int64_t row_blocks = (m + kRows - 1) / kRows;
  auto run_blocks = [&](std::int64_t first, std::int64_t step) {
    std::vector<double> acc(static_cast<std::size_t>(kRows * n));
    for (std::int64_t blk = first; blk < row_blocks; blk += step) {
      const std::int64_t i0 = blk * kRows;
      const std::int64_t rows = std::min(kRows, m - i0);
      std::fill(acc.begin(), acc.begin() + rows * n, 0.0);
      for (std::int64_t k0 = 0; k0 < k; k0 += kDepth) {
        const std::int64_t k1 = std::min(k, k0 + kDepth);
        for (std::int64_t r = 0; r < rows; ++r) {
          const float* arow = pa + (i0 + r) * lda;
          double* out = acc.data() + r * n;
          for (std::int64_t kk = k0; kk < k1; ++kk) {
            const double av = arow[kk];
            const float* brow = pb + kk * ldb;
            for (std::int64_t j = 0; j < n; ++j) out[j] += av * static_cast<double>(brow[j]);
          }
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const double* in = acc.data() + r * n;
        for (std::int64_t j = 0; j < n; ++j) {
          double v = alpha * in[j];
          if (beta != 0.0) v += beta * load_element(cm, 0, i0 + r, j);  // beta == 0: C is not read
          store_element(cm, 0, i0 + r, j, v);
        }
      }
    }
  };

  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const std::int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t threads = macs < 2e7 ? 1 : std::min({hw, row_blocks, std::int64_t{32}});
  if (threads <= 1) {
    run_blocks(0, 1);
    return Status::success();
  }
  std::vector<std::thread> pool;
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  auto worker = [&](std::int64_t t) {
    try {
      run_blocks(t, threads);
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(t)] = e.what();
    }
  };
  std::int64_t started = 0;
  try {
    for (; started < threads; ++started) pool.emplace_back(worker, started);
  } catch (const std::exception&) {
    // No more threads to be had: this one does the remaining shares.
  }
  for (std::int64_t t = started; t < threads; ++t) worker(t);
  for (std::thread& th : pool) th.join();
  for (const std::string& e : errors)
    if (!e.empty()) return Status::fail(ErrorKind::internal, "gemm reference: " + e);
  return Status::success();
}

}  // namespace

Status gemm_reference(const TensorRef& a, const TensorRef& b, const TensorRef& c, double alpha,
                      double beta) noexcept {
  try {
    if (!a.device.is_host() || !b.device.is_host() || !c.device.is_host())
      return Status::fail(ErrorKind::device, "gemm reference: tensors must be in host memory");
    if (!is_input_dtype(a.dtype) || b.dtype != a.dtype || (c.dtype != DType::f32 && c.dtype != a.dtype))
      return Status::fail(ErrorKind::dtype, "gemm reference: a and b must share one of f32, f16, bf16 and c be f32 or "
                                            "that type, got " + std::string(dtype_name(a.dtype)) + ", " +
                                            std::string(dtype_name(b.dtype)) + ", " + std::string(dtype_name(c.dtype)));
    const std::int64_t m = a.rows(), k = a.cols(), n = b.cols(), batch = c.batch();
    if (b.rows() != k || c.rows() != m || c.cols() != n || (a.shape.rank == 3 && a.batch() != batch) ||
        (b.shape.rank == 3 && b.batch() != batch))
      return Status::fail(ErrorKind::shape, "gemm reference: shapes " + a.shape.to_string() + " x " +
                                                b.shape.to_string() + " -> " + c.shape.to_string() +
                                                " do not agree");
    if (m == 0 || n == 0) return Status::success();
    std::vector<float> a_storage, b_storage;
    for (std::int64_t bi = 0; bi < batch; ++bi) {
      std::int64_t lda = 0, ldb = 0;
      const float* pa = as_row_major_floats(a, bi, a_storage, lda);
      const float* pb = as_row_major_floats(b, bi, b_storage, ldb);
      const TensorRef cm = c.matrix_at(bi);
      Status st = gemm_reference_f32(pa, lda, pb, ldb, cm, m, n, k, alpha, beta);
      if (!st.ok()) return st;
    }
    return Status::success();
  } catch (const std::exception& e) {
    return Status::fail(ErrorKind::internal, std::string("gemm reference: ") + e.what());
  } catch (...) {
    return Status::fail(ErrorKind::internal, "gemm reference: unknown exception");
  }
}

}  // namespace kiln::gemm
