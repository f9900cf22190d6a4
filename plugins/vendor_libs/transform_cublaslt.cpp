// The cublasLtMatrixTransform variants (C = alpha op(A) + beta op(B), scale type f32), the vendor
// baselines of the half-precision element ops:
//   add_cublaslt_transform        c = a + b for f16 / bf16:  alpha = beta = 1, no transposes;
//   transpose_cublaslt_transform  out = in^T for f16 / bf16: alpha = 1, op(A) = A^T or A
//                                 (transposed views), beta = 0 (B is not passed).
// Layouts as column_major_view.hpp describes.  The descriptors are built in place on the stack
// (cublasLtMatrixLayoutInit / cublasLtMatrixTransformDescInit), so a launch allocates nothing;
// the device's cuBLASLt handle is created when op() decides (prepare), never in a memo-hit launch.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "column_major_view.hpp"
#include "cuda_support.hpp"
#include "vendor_variant.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

Status transform_status(cublasStatus_t s, const std::string& variant, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::success();
  (void)cudaGetLastError();
  const ErrorKind kind =
      (s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_NOT_SUPPORTED) ? ErrorKind::unsupported : ErrorKind::cuda;
  return Status::fail(kind, variant + ": " + call + " failed: " + cublasGetStatusName(s) + " (" +
                                cublasGetStatusString(s) + ")");
}

// The process-wide cuBLASLt handle of a device for transforms, created on first use (with the
// device current) and never destroyed (destruction at exit can outlive the CUDA context).  Not
// bound to a stream, so launches share it without a lock.
Status transform_handle(const std::string& variant, int ordinal, cublasLtHandle_t& out) {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(ordinal);
  if (it == handles.end()) {
    cublasLtHandle_t h = nullptr;
    if (Status s = transform_status(cublasLtCreate(&h), variant, "cublasLtCreate"); !s.ok()) return s;
    it = handles.emplace(ordinal, h).first;
  }
  out = it->second;
  return Status::success();
}

cudaDataType_t half_type(DType t) { return t == DType::f16 ? CUDA_R_16F : CUDA_R_16BF; }

bool fits_int64_ld(const ColumnMajorView& v) { return v.rows >= 0 && v.cols >= 0 && v.ld >= 1; }

class TransformVariant : public VendorVariant {
 public:
  using VendorVariant::VendorVariant;
  std::shared_ptr<const PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo& d) const override {
    ScopedDevice on(p.device.ordinal);
    cublasLtHandle_t h = nullptr;
    // A failure here is not fatal: launch() tries again and reports it.
    if (on.ok()) (void)transform_handle(name(), p.device.ordinal, h);
    return VendorVariant::prepare(p, c, d);
  }

 protected:
  // C = alpha op_a(A) + beta op_b(B) (B may be null with beta = 0), every view column-major.
  Status transform(const Problem& problem, Stream stream, cublasOperation_t op_a, const void* a,
                   const ColumnMajorView& va, float beta, const void* b, const ColumnMajorView* vb, void* c,
                   const ColumnMajorView& vc) const {
    if (problem.dtype != DType::f16 && problem.dtype != DType::bf16)
      return Status::fail(ErrorKind::dtype, name() + ": f16 or bf16, got " + std::string(dtype_name(problem.dtype)));
    if (!fits_int64_ld(va) || !fits_int64_ld(vc) || (vb != nullptr && !fits_int64_ld(*vb)))
      return Status::fail(ErrorKind::argument, name() + ": bad extents or leading dimensions");
    if (vc.rows == 0 || vc.cols == 0) return Status::success();
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, name().c_str()); !s.ok()) return s;
    cublasLtHandle_t handle = nullptr;
    if (Status s = transform_handle(name(), problem.device.ordinal, handle); !s.ok()) return s;
    const cudaDataType_t type = half_type(problem.dtype);
    cublasLtMatrixTransformDescOpaque_t desc_store;
    cublasLtMatrixLayoutOpaque_t la_store, lb_store, lc_store;
    const auto desc = &desc_store;
    const auto la = &la_store, lb = &lb_store, lc = &lc_store;
    if (Status s = transform_status(cublasLtMatrixTransformDescInit(desc, CUDA_R_32F), name(),
                                    "cublasLtMatrixTransformDescInit");
        !s.ok())
      return s;
    if (Status s = transform_status(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                                            &op_a, sizeof op_a),
                                    name(), "cublasLtMatrixTransformDescSetAttribute(TRANSA)");
        !s.ok())
      return s;
    if (Status s = transform_status(cublasLtMatrixLayoutInit(la, type, static_cast<std::uint64_t>(va.rows),
                                                             static_cast<std::uint64_t>(va.cols), va.ld),
                                    name(), "cublasLtMatrixLayoutInit(A)");
        !s.ok())
      return s;
    if (vb != nullptr) {
      if (Status s = transform_status(cublasLtMatrixLayoutInit(lb, type, static_cast<std::uint64_t>(vb->rows),
                                                               static_cast<std::uint64_t>(vb->cols), vb->ld),
                                      name(), "cublasLtMatrixLayoutInit(B)");
          !s.ok())
        return s;
    }
    if (Status s = transform_status(cublasLtMatrixLayoutInit(lc, type, static_cast<std::uint64_t>(vc.rows),
                                                             static_cast<std::uint64_t>(vc.cols), vc.ld),
                                    name(), "cublasLtMatrixLayoutInit(C)");
        !s.ok())
      return s;
    const float alpha = 1.0f;
    return transform_status(cublasLtMatrixTransform(handle, desc, &alpha, a, la, &beta, b, vb != nullptr ? lb : nullptr,
                                                    c, lc, static_cast<cudaStream_t>(stream.handle())),
                            name(), "cublasLtMatrixTransform");
  }
};

class AddCublasLtTransform final : public TransformVariant {
 public:
  AddCublasLtTransform()
      : TransformVariant("add_cublaslt_transform", "add", {DType::f16, DType::bf16},
                         "cublasLtMatrixTransform, alpha = beta = 1 (f32 scale)") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    if (p.dtype != DType::f16 && p.dtype != DType::bf16)
      return Support::no("add_cublaslt_transform: f16 or bf16 only, got " + std::string(dtype_name(p.dtype)));
    return Support::yes();
  }

  // args = {a, b, c}, one shape [m, n], row-major (add takes no transposed views).
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream stream) const override {
    const ColumnMajorView a = column_major_view(args.tensor(0));
    const ColumnMajorView b = column_major_view(args.tensor(1));
    const ColumnMajorView c = column_major_view(args.tensor(2));
    return transform(problem, stream, CUBLAS_OP_N, args.tensor(0).data, a, 1.0f, args.tensor(1).data, &b,
                     args.tensor(2).data, c);
  }
};

class TransposeCublasLtTransform final : public TransformVariant {
 public:
  TransposeCublasLtTransform()
      : TransformVariant("transpose_cublaslt_transform", "transpose", {DType::f16, DType::bf16},
                         "cublasLtMatrixTransform, op(A) = A^T (or A for a transposed view), beta = 0") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    if (p.dtype != DType::f16 && p.dtype != DType::bf16)
      return Support::no("transpose_cublaslt_transform: f16 or bf16 only, got " + std::string(dtype_name(p.dtype)));
    return Support::yes();
  }

  // args = {in[m,n], out[n,m]}, each row- or column-major: op = T when both have the same layout.
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream stream) const override {
    const ColumnMajorView a = column_major_view(args.tensor(0));
    const ColumnMajorView c = column_major_view(args.tensor(1));
    const cublasOperation_t op = a.from_row_major == c.from_row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    return transform(problem, stream, op, args.tensor(0).data, a, 0.0f, nullptr, nullptr, args.tensor(1).data, c);
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_cublaslt_transform() { return std::make_shared<AddCublasLtTransform>(); }
std::shared_ptr<const Variant> make_transpose_cublaslt_transform() {
  return std::make_shared<TransposeCublasLtTransform>();
}

}  // namespace kiln::vendor
