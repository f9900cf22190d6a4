// The two cublas<t>geam variants (C = alpha op(A) + beta op(B)):
//   transpose_cublas_geam  out = in^T:  alpha = 1, op(A) = A^T or A (transposed views), beta = 0
//                          (B is not read);
//   add_cublas_geam        c = a + b:   alpha = beta = 1, no transposes.
// Row-major X with row stride ld is the column-major X^T with leading dimension ld (see
// gemm_cublas.cpp), so a row-major [rows, cols] operand is a column-major cols x rows one.
#include <algorithm>
#include <cstdint>

#include "column_major_view.hpp"
#include "cublas_variant.hpp"
#include "cuda_support.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

Support extents_fit(const Problem& p) {
  for (const char* d : {"m", "n"})
    if (Support s = int_limit(d, dim_or(p, d, 0), "cuBLAS"); !s.ok) return s;
  return Support::yes();
}

// The leading dimension of a row-major tensor seen column-major: its row stride, or its width
// when it has one row (a rank-1 tensor's stride is never stepped over); at least 1.
std::int64_t leading_dim(const TensorRef& t) {
  return std::max<std::int64_t>({1, t.cols(), t.rows() > 1 ? t.row_stride : t.cols()});
}

Status fit_status(const char* variant, std::initializer_list<std::int64_t> values) {
  for (std::int64_t v : values)
    if (!fits_int(v))
      return Status::fail(ErrorKind::unsupported,
                          std::string(variant) + ": an extent or row stride exceeds 2^31-1 (cuBLAS takes int)");
  return Status::success();
}

class TransposeCublasGeam final : public CublasVariant {
 public:
  TransposeCublasGeam()
      : CublasVariant("transpose_cublas_geam", "transpose", {DType::f32}, "cublasSgeam with op(A) = A^T, beta = 0") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override { return extents_fit(p); }

  // args = {in[m,n], out[n,m]}, each row- or column-major (column_major_view.hpp): C = op(A) with
  // op = T when both have the same layout, N when one is the other's transpose already.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& in = args.tensor(0);
    const TensorRef& out = args.tensor(1);
    const ColumnMajorView a = column_major_view(in), c = column_major_view(out);
    if (Status s = fit_status("transpose_cublas_geam", {c.rows, c.cols, a.ld, c.ld}); !s.ok()) return s;
    if (c.rows == 0 || c.cols == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "transpose_cublas_geam"); !s.ok()) return s;
    CublasLease blas;
    if (Status s = blas.acquire("transpose_cublas_geam", problem.device.ordinal,
                                static_cast<cudaStream_t>(stream.handle()), workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t op = a.from_row_major == c.from_row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    // beta = 0: B is not read, so none is passed (its leading dimension must still be valid).
    return cublas_status(cublasSgeam(blas.handle(), op, CUBLAS_OP_N, static_cast<int>(c.rows), static_cast<int>(c.cols),
                                     &one, in.as<const float>(), static_cast<int>(a.ld), &zero, nullptr,
                                     static_cast<int>(c.ld), out.as<float>(), static_cast<int>(c.ld)),
                         "transpose_cublas_geam", "cublasSgeam");
  }
};

class AddCublasGeam final : public CublasVariant {
 public:
  AddCublasGeam()
      : CublasVariant("add_cublas_geam", "add", {DType::f32, DType::f64}, "cublas[SD]geam with alpha = beta = 1") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override { return extents_fit(p); }

  // args = {a, b, c}, one shape [m,n] (rank 1: m = 1).  Column-major each is n x m.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& a = args.tensor(0);
    const TensorRef& b = args.tensor(1);
    const TensorRef& c = args.tensor(2);
    const std::int64_t m = c.rows(), n = c.cols();
    const std::int64_t lda = leading_dim(a), ldb = leading_dim(b), ldc = leading_dim(c);
    if (Status s = fit_status("add_cublas_geam", {m, n, lda, ldb, ldc}); !s.ok()) return s;
    if (m == 0 || n == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "add_cublas_geam"); !s.ok()) return s;
    CublasLease blas;
    if (Status s = blas.acquire("add_cublas_geam", problem.device.ordinal, static_cast<cudaStream_t>(stream.handle()),
                                workspace, kCublasWorkspaceBytes);
        !s.ok())
      return s;
    const int rows = static_cast<int>(n), cols = static_cast<int>(m);
    if (problem.dtype == DType::f64) {
      const double one = 1.0;
      return cublas_status(cublasDgeam(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_N, rows, cols, &one, a.as<const double>(),
                                       static_cast<int>(lda), &one, b.as<const double>(), static_cast<int>(ldb),
                                       c.as<double>(), static_cast<int>(ldc)),
                           "add_cublas_geam", "cublasDgeam");
    }
    if (problem.dtype != DType::f32)
      return Status::fail(ErrorKind::dtype, "add_cublas_geam: dtype " + std::string(dtype_name(problem.dtype)) +
                                                " not supported (f32, f64)");
    const float one = 1.0f;
    return cublas_status(cublasSgeam(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_N, rows, cols, &one, a.as<const float>(),
                                     static_cast<int>(lda), &one, b.as<const float>(), static_cast<int>(ldb),
                                     c.as<float>(), static_cast<int>(ldc)),
                         "add_cublas_geam", "cublasSgeam");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_cublas_geam() { return std::make_shared<TransposeCublasGeam>(); }
std::shared_ptr<const Variant> make_add_cublas_geam() { return std::make_shared<AddCublasGeam>(); }

}  // namespace kiln::vendor
