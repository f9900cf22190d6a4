// gemm_cublaslt: every gemm problem through cuBLASLt — f32 (IEEE or TF32), f16 and bf16 inputs with
// f32 accumulation, C in f32 or the input type, row- or column-major A and B, batches with strides
// (0 broadcasts).  The tuning parameter `algo` picks the algo-th of cuBLASLt's heuristic results
// (0 = its first choice, the default and the baseline of `kiln bench --vs vendor`), so the tuner
// can choose among cuBLASLt's own solutions the way PyTorch's TunableOp does.
//
// Layouts.  kiln's C is row-major, which cuBLASLt (column-major) sees as C^T, so it computes
// C^T = B^T * A^T.  A row-major X with row stride ld is the column-major X^T with leading
// dimension ld (operation N); a column-major X with column stride ld is X itself (operation T).
//
// Decide once, launch many: the descriptors and the heuristic's results for one problem and
// layout are built on first use and cached for the life of the process, so a later launch is one
// lookup and one cublasLtMatmul; cuBLASLt gets the workspace the core reserved (workspace_bytes).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cublas_context.hpp"
#include "cuda_support.hpp"
#include "vendor_variant.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

// How many of the heuristic's results `algo` ranges over.
constexpr int kMaxAlgos = 8;
// Just below gemm_cublas, which stays op()'s untuned f32 choice where it measured fastest.
constexpr int kCublasLtPriority = kVendorPriority - 1;

// One problem as cuBLASLt needs it: everything that shapes the descriptors and the heuristic.
struct LtShape {
  int ordinal = 0;
  DType in = DType::f32, out = DType::f32;
  int tf32 = 0;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  int ta = 0, tb = 0;
  std::int64_t lda = 1, ldb = 1, ldc = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int align = 16;

  std::array<std::int64_t, 18> key() const {
    return {ordinal, static_cast<std::int64_t>(in), static_cast<std::int64_t>(out), tf32, m, n, k, batch, ta, tb,
            lda, ldb, ldc, stride_a, stride_b, stride_c, align, 0};
  }
};

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

Status lt_status(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::success();
  return Status::fail(ErrorKind::cuda, std::string("gemm_cublaslt: ") + call + " failed: " + cublasGetStatusName(s) +
                                           " (" + cublasGetStatusString(s) + ")");
}

// The process-wide cuBLASLt handle of a device, created on first use and never destroyed (as
// cublas_context does for cuBLAS: destruction at exit can outlive the CUDA context).  A cuBLASLt
// handle is not bound to a stream, so launches share it without a lock.
Status lt_handle(int ordinal, cublasLtHandle_t& out) {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(ordinal);
  if (it == handles.end()) {
    cublasLtHandle_t h = nullptr;
    if (Status s = lt_status(cublasLtCreate(&h), "cublasLtCreate"); !s.ok()) return s;
    it = handles.emplace(ordinal, h).first;
  }
  out = it->second;
  return Status::success();
}

// Descriptors and heuristic results of one LtShape.
struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B^T), B (our A^T), C = D
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  Status status;
};

Status make_layout(cublasLtMatrixLayout_t& layout, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                   std::int64_t batch, std::int64_t stride) {
  if (Status s = lt_status(cublasLtMatrixLayoutCreate(&layout, cuda_type(t), static_cast<std::uint64_t>(rows),
                                                       static_cast<std::uint64_t>(cols), ld),
                           "cublasLtMatrixLayoutCreate");
      !s.ok())
    return s;
  if (batch > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch);
    if (Status s = lt_status(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                              sizeof count),
                             "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
        !s.ok())
      return s;
    if (Status s = lt_status(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                              &stride, sizeof stride),
                             "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
        !s.ok())
      return s;
  }
  return Status::success();
}

void build_plan(const LtShape& sh, cublasLtHandle_t handle, LtPlan& plan) {
  const cublasComputeType_t compute = sh.in == DType::f32 && sh.tf32 == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  plan.status = lt_status(cublasLtMatmulDescCreate(&plan.op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  if (!plan.status.ok()) return;
  // cuBLASLt's A is our B^T: N for a row-major B (memory is n x k column-major), T for a
  // column-major B (memory is k x n).  Its B is our A^T likewise.
  const cublasOperation_t op_x = sh.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_y = sh.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.status = lt_status(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof op_x),
                          "cublasLtMatmulDescSetAttribute(TRANSA)");
  if (!plan.status.ok()) return;
  plan.status = lt_status(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &op_y, sizeof op_y),
                          "cublasLtMatmulDescSetAttribute(TRANSB)");
  if (!plan.status.ok()) return;
  plan.status = make_layout(plan.a, sh.in, sh.tb ? sh.k : sh.n, sh.tb ? sh.n : sh.k, sh.ldb, sh.batch, sh.stride_b);
  if (!plan.status.ok()) return;
  plan.status = make_layout(plan.b, sh.in, sh.ta ? sh.m : sh.k, sh.ta ? sh.k : sh.m, sh.lda, sh.batch, sh.stride_a);
  if (!plan.status.ok()) return;
  plan.status = make_layout(plan.c, sh.out, sh.n, sh.m, sh.ldc, sh.batch, sh.stride_c);
  if (!plan.status.ok()) return;

  cublasLtMatmulPreference_t pref = nullptr;
  plan.status = lt_status(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  if (!plan.status.ok()) return;
  const std::uint64_t ws = kCublasWorkspaceBytes;
  const std::uint32_t align = static_cast<std::uint32_t>(sh.align);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  // Only algorithms that work at the arguments' alignment (the default assumes 256 bytes).
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align);
  plan.algos.resize(kMaxAlgos);
  int found = 0;
  plan.status = lt_status(cublasLtMatmulAlgoGetHeuristic(handle, plan.op, plan.a, plan.b, plan.c, plan.c, pref,
                                                         kMaxAlgos, plan.algos.data(), &found),
                          "cublasLtMatmulAlgoGetHeuristic");
  cublasLtMatmulPreferenceDestroy(pref);
  plan.algos.resize(plan.status.ok() ? static_cast<std::size_t>(found) : 0);
  if (plan.status.ok() && found == 0)
    plan.status = Status::fail(ErrorKind::unsupported, "gemm_cublaslt: cuBLASLt has no algorithm for this problem");
}

// The cached plan of `sh`; built on first use.  Plans are never freed (a handful per problem
// shape a process runs), so the pointer stays valid.
const LtPlan& plan_for(const LtShape& sh) {
  static std::mutex mutex;
  static std::map<std::array<std::int64_t, 18>, std::unique_ptr<LtPlan>> plans;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = plans[sh.key()];
  if (!slot) {
    slot = std::make_unique<LtPlan>();
    cublasLtHandle_t handle = nullptr;
    slot->status = lt_handle(sh.ordinal, handle);
    if (slot->status.ok()) build_plan(sh, handle, *slot);
  }
  return *slot;
}

// The shape of a problem with dense operands (what supports() can know without the arguments).
LtShape dense_shape(const Problem& p) {
  LtShape sh;
  sh.ordinal = p.device.ordinal;
  sh.in = p.dtype;
  sh.out = dim_or(p, "c16", 0) ? p.dtype : DType::f32;
  sh.tf32 = static_cast<int>(dim_or(p, "tf32", 0));
  sh.m = dim_or(p, "m", 0);
  sh.n = dim_or(p, "n", 0);
  sh.k = dim_or(p, "k", 0);
  sh.batch = dim_or(p, "batch", 1);
  sh.ta = static_cast<int>(dim_or(p, "ta", 0));
  sh.tb = static_cast<int>(dim_or(p, "tb", 0));
  sh.lda = std::max<std::int64_t>(1, sh.ta ? sh.m : sh.k);
  sh.ldb = std::max<std::int64_t>(1, sh.tb ? sh.k : sh.n);
  sh.ldc = std::max<std::int64_t>(1, sh.n);
  sh.stride_a = sh.m * sh.k;
  sh.stride_b = sh.k * sh.n;
  sh.stride_c = sh.m * sh.n;
  sh.align = p.align_bytes;
  return sh;
}

// The shape of actual arguments (validated by the gemm schema).
LtShape shape_of(const Args& args, const Problem& p) {
  LtShape sh = dense_shape(p);
  const TensorRef& a = args.tensor(0);
  const TensorRef& b = args.tensor(1);
  const TensorRef& c = args.tensor(2);
  // A leading dimension must cover the rows of the column-major view even when an extent is 1.
  sh.lda = std::max<std::int64_t>(sh.ta ? std::max<std::int64_t>(1, sh.m) : std::max<std::int64_t>(1, sh.k),
                                  sh.ta ? a.col_stride : a.row_stride);
  sh.ldb = std::max<std::int64_t>(sh.tb ? std::max<std::int64_t>(1, sh.k) : std::max<std::int64_t>(1, sh.n),
                                  sh.tb ? b.col_stride : b.row_stride);
  sh.ldc = std::max<std::int64_t>(std::max<std::int64_t>(1, sh.n), c.row_stride);
  sh.stride_a = a.shape.rank == 3 ? a.batch_stride : 0;
  sh.stride_b = b.shape.rank == 3 ? b.batch_stride : 0;
  sh.stride_c = c.shape.rank == 3 ? c.batch_stride : 0;
  return sh;
}

class GemmCublasLt final : public Variant {
 public:
  GemmCublasLt()
      : Variant(VariantDesc{"gemm_cublaslt", "gemm", DeviceKind::cuda, {DType::f32, DType::bf16, DType::f16},
                            kCublasLtPriority,
                            "cublasLtMatmul: f32 / TF32 / f16 / bf16, f32 accumulation, any layout, batched; "
                            "algo = index into cuBLASLt's heuristic results (0 = its first choice)",
                            /*reference=*/false, /*vendor=*/true},
                ParamSpace().param("algo", [] {
                  std::vector<int> v;
                  for (int i = 0; i < kMaxAlgos; ++i) v.push_back(i);
                  return v;
                }())) {}

  Config default_config(const DeviceInfo&) const override { return Config{{"algo", 0}}; }

  Support supports(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    try {
      if (d.cc_major < 8 && p.dtype == DType::bf16) return Support::no("bf16 needs compute capability 8.0 or newer");
      if (dim_or(p, "tf32", 0) == 1 && d.cc_major < 8) return Support::no("TF32 needs compute capability 8.0 or newer");
      for (const char* name : {"m", "n", "k", "batch"})
        if (Support s = int_limit(name, dim_or(p, name, 0), "cuBLASLt"); !s.ok) return s;
      const LtShape sh = dense_shape(p);
      if (sh.m == 0 || sh.n == 0 || sh.batch == 0) return Support::yes();  // nothing to write
      if (sh.k == 0) return Support::no("k = 0 (C = beta * C): cuBLASLt's layouts need k >= 1");
      const LtPlan& plan = plan_for(sh);
      if (!plan.status.ok()) return Support::no(plan.status.message());
      const int algo = c.get_or("algo", 0);
      if (algo >= static_cast<int>(plan.algos.size()))
        return Support::no("algo " + std::to_string(algo) + ": cuBLASLt's heuristic offers " +
                           std::to_string(plan.algos.size()) + " algorithm(s) for this problem");
      return Support::yes();
    } catch (const std::exception& e) {
      return Support::no(std::string("gemm_cublaslt: ") + e.what());
    }
  }

  std::size_t workspace_bytes(const Problem&, const Config&) const override { return kCublasWorkspaceBytes; }

  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    try {
      if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm_cublaslt: needs a, b, c");
      const LtShape sh = shape_of(args, p);
      if (sh.m == 0 || sh.n == 0 || sh.batch == 0) return Status::success();
      if (workspace == nullptr)
        return Status::fail(ErrorKind::argument, "gemm_cublaslt: needs a workspace of " +
                                                     std::to_string(kCublasWorkspaceBytes) + " bytes, got none");
      ScopedDevice on(p.device.ordinal);
      if (Status s = device_status(on, "gemm_cublaslt"); !s.ok()) return s;
      const LtPlan& plan = plan_for(sh);
      if (!plan.status.ok()) return plan.status;
      int algo = c.get_or("algo", 0);
      if (algo < 0) return Status::fail(ErrorKind::argument, "gemm_cublaslt: algo " + std::to_string(algo) + " < 0");
      // supports() counted the heuristic's results for dense operands; padded leading dimensions
      // (a pitched or sliced view) can leave fewer, and then cuBLASLt's own first choice runs.
      if (algo >= static_cast<int>(plan.algos.size())) algo = 0;
      if (plan.algos.empty())
        return Status::fail(ErrorKind::unsupported, "gemm_cublaslt: cuBLASLt has no algorithm for these arguments");
      cublasLtHandle_t handle = nullptr;
      if (Status s = lt_handle(sh.ordinal, handle); !s.ok()) return s;
      const float alpha = static_cast<float>(scalar_or(args, 0, 1.0));
      const float beta = static_cast<float>(scalar_or(args, 1, 0.0));
      return lt_status(cublasLtMatmul(handle, plan.op, &alpha, args.tensor(1).data, plan.a, args.tensor(0).data, plan.b,
                                      &beta, args.tensor(2).data, plan.c, args.tensor(2).data, plan.c,
                                      &plan.algos[static_cast<std::size_t>(algo)].algo, workspace,
                                      kCublasWorkspaceBytes, static_cast<cudaStream_t>(stream.handle())),
                       "cublasLtMatmul");
    } catch (const std::exception& e) {
      return Status::fail(ErrorKind::internal, std::string("gemm_cublaslt: ") + e.what());
    }
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemm_cublaslt() { return std::make_shared<GemmCublasLt>(); }

}  // namespace kiln::vendor
