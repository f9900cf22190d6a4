#include "gemm_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace kiln::gemm {

Status gemm_reference(const TensorRef& a, const TensorRef& b, const TensorRef& c, double alpha,
                      double beta) noexcept {
  try {
    if (!a.device.is_host() || !b.device.is_host() || !c.device.is_host())
      return Status::fail(ErrorKind::device, "gemm reference: tensors must be in host memory");
    if (a.dtype != DType::f32 || b.dtype != DType::f32 || c.dtype != DType::f32)
      return Status::fail(ErrorKind::dtype, "gemm reference: tensors must be f32");
    const std::int64_t m = a.rows(), k = a.cols(), n = b.cols();
    if (b.rows() != k || c.rows() != m || c.cols() != n)
      return Status::fail(ErrorKind::shape, "gemm reference: shapes " + a.shape.to_string() + " x " +
                                                b.shape.to_string() + " -> " + c.shape.to_string() +
                                                " do not agree");
    if (m == 0 || n == 0) return Status::success();
    const float* pa = a.as<const float>();
    const float* pb = b.as<const float>();
    float* pc = c.as<float>();
    const std::int64_t lda = a.row_stride, ldb = b.row_stride, ldc = c.row_stride;

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
          float* crow = pc + (i0 + r) * ldc;
          const double* in = acc.data() + r * n;
          for (std::int64_t j = 0; j < n; ++j) {
            double v = alpha * in[j];
            if (beta != 0.0) v += beta * static_cast<double>(crow[j]);  // beta == 0: C is not read
            crow[j] = static_cast<float>(v);
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
  } catch (const std::exception& e) {
    return Status::fail(ErrorKind::internal, std::string("gemm reference: ") + e.what());
  } catch (...) {
    return Status::fail(ErrorKind::internal, "gemm reference: unknown exception");
  }
}

}  // namespace kiln::gemm
