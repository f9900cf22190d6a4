// gemm_wgmma: kiln's Hopper bf16 / f16 / TF32 / 3xTF32 gemm (wgmma fed by TMA, warp-specialised, persistent), an
// adapter from (Args, Problem, Config) to launch_wgmma.  Built only when the CUDA architectures
// include 90 (the kernels are sm_90a objects); registered by register_gemm.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "gemm_schema.hpp"
#include "gemm_variants.hpp"
#include "kiln/args.hpp"
#include "kiln/device.hpp"
#include "kiln/variant.hpp"
#include "wgmma_3xtf32.hpp"
#include "wgmma_configs.hpp"
#include "wgmma_launch.hpp"
#include "wgmma_params.hpp"
#include "wgmma_split_k.hpp"

namespace kiln::gemm {
namespace {

// Just below the vendor variants (34-35): an untuned op() keeps running cuBLASLt; the tuner
// compares both (and the database decides) wherever it is run.
constexpr int kWgmmaPriority = 33;

// Paths added after the first GPU-verified one (16-bit, ta = 0, tb = 1), each switched off here
// alone (supports() then declines it with a reason) should a GPU run show it failing.
constexpr bool kWgmmaTf32Enabled = true;  // f32 A and B with allow_tf32 = 1 (wgmma .tf32)
constexpr bool kWgmmaMnAEnabled = true;   // 16-bit, A column-major (ta = 1): MN-major A tiles
constexpr bool kWgmmaMnBEnabled = true;   // 16-bit, B row-major (tb = 0): MN-major B tiles
constexpr bool kWgmma3xTf32Enabled = true;  // f32 A and B with allow_tf32 = 2 (3xTF32, a split prepass)

// The 3xTF32 path (allow_tf32 = 2): TF32 wgmma on operands split into hi and lo parts.
bool is_3xtf32(const Problem& p) { return p.dtype == DType::f32 && p.dims[kDimTf32] == 2; }

Wgmma3xTf32Workspace workspace_3xtf32(const Problem& p) {
  return wgmma_3xtf32_workspace(p.dims[kDimM], p.dims[kDimN], p.dims[kDimK], p.dims[kDimBatch]);
}

// Split k: the slices of config row `index` on `p` and their partials' workspace.
WgmmaSplitPlan split_plan(const Problem& p, int index) {
  return wgmma_split_plan(p.dims[kDimM], p.dims[kDimN], p.dims[kDimK], p.dims[kDimBatch], kWgmmaConfigs[index].splits,
                          p.dtype == DType::f32 ? 32 : 64);
}

// 3xTF32: queues the split of A and B into the workspace (any layout in, K-major out) and points
// `g` at the parts.  The kernel then sees K-major hi / lo operands with pitch w.ld.
Status split_operands_3xtf32(const TensorRef& a, const TensorRef& b, const Problem& p, void* workspace,
                             WgmmaGemmArgs& g, void* stream) {
  const Wgmma3xTf32Workspace w = workspace_3xtf32(p);
  if (workspace == nullptr)
    return Status::fail(ErrorKind::argument, "gemm_wgmma: 3xTF32 (allow_tf32=2) needs a workspace of " +
                                                 std::to_string(w.bytes) + " bytes, got none");
  unsigned char* ws = static_cast<unsigned char*>(workspace);
  const bool a_batched = a.shape.rank == 3 && a.batch_stride != 0 && g.batch > 1;
  const bool b_batched = b.shape.rank == 3 && b.batch_stride != 0 && g.batch > 1;
  // A: m rows of k, element (i, kk) at i * row_stride + kk * col_stride.
  Tf32SplitOperand sa;
  sa.src = static_cast<const float*>(a.data);
  sa.rows = g.m;
  sa.k = g.k;
  sa.batch = a_batched ? g.batch : 1;
  sa.r_stride = a.row_stride;
  sa.k_stride = a.col_stride;
  sa.batch_stride = a_batched ? a.batch_stride : 0;
  sa.hi = reinterpret_cast<float*>(ws + w.a_hi);
  sa.lo = reinterpret_cast<float*>(ws + w.a_lo);
  sa.ld = w.ld;
  // B (k x n): n rows of k, element (j, kk) at kk * row_stride + j * col_stride.
  Tf32SplitOperand sb = sa;
  sb.src = static_cast<const float*>(b.data);
  sb.rows = g.n;
  sb.batch = b_batched ? g.batch : 1;
  sb.r_stride = b.col_stride;
  sb.k_stride = b.row_stride;
  sb.batch_stride = b_batched ? b.batch_stride : 0;
  sb.hi = reinterpret_cast<float*>(ws + w.b_hi);
  sb.lo = reinterpret_cast<float*>(ws + w.b_lo);
  Status st = launch_tf32_split(sa, stream);
  if (!st.ok()) return st;
  st = launch_tf32_split(sb, stream);
  if (!st.ok()) return st;
  g.split3 = true;
  g.a = sa.hi;
  g.a_lo = sa.lo;
  g.b = sb.hi;
  g.b_lo = sb.lo;
  g.a_mn = g.b_mn = false;
  g.lda = g.ldb = w.ld;
  g.stride_a = a_batched ? w.a_batch : 0;
  g.stride_b = b_batched ? w.b_batch : 0;
  return Status::success();
}

// The per-call part of a launch: arguments from the tensors, alignment re-checked (a mislabelled
// problem gets a Status, not a device fault).  Builds no string unless something is wrong.
Status run_wgmma(int config_index, int sms, const Args& args, const Problem& p, void* workspace,
                 Stream stream) noexcept {
  try {
    if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm_wgmma: needs a, b, c");
    const TensorRef& a = args.tensor(kA);
    const TensorRef& b = args.tensor(kB);
    const TensorRef& cc = args.tensor(kC);
    WgmmaGemmArgs g;
    g.a = a.data;
    g.b = b.data;
    g.c = cc.data;
    g.m = static_cast<int>(p.dims[kDimM]);
    g.n = static_cast<int>(p.dims[kDimN]);
    g.k = static_cast<int>(p.dims[kDimK]);
    g.batch = static_cast<int>(p.dims[kDimBatch]);
    g.a_mn = p.dims[kDimTa] == 1;  // A column-major: its column stride is the pitch
    g.b_mn = p.dims[kDimTb] == 0;  // B row-major: its row stride is the pitch
    g.lda = g.a_mn ? a.col_stride : a.row_stride;
    g.ldb = g.b_mn ? b.row_stride : b.col_stride;
    g.ldc = cc.row_stride;
    g.stride_a = a.shape.rank == 3 ? a.batch_stride : 0;
    g.stride_b = b.shape.rank == 3 ? b.batch_stride : 0;
    g.stride_c = cc.shape.rank == 3 ? cc.batch_stride : 0;
    g.alpha = static_cast<float>(gemm_scalar(args, kAlpha));
    g.beta = static_cast<float>(gemm_scalar(args, kBeta));
    g.tf32 = p.dtype == DType::f32;
    g.bf16 = p.dtype == DType::bf16;
    g.c_half = p.dims[kDimC16] == 1 && !g.tf32;  // f32 inputs: the input type of C is f32
    g.sm_count = sms;
    int align = 16;
    for (const TensorRef* t : {&a, &b, &cc}) align = std::min(align, alignment_of(reinterpret_cast<std::uintptr_t>(t->data)));
    const std::uintptr_t out_size = g.c_half ? 2 : 4, in_size = g.tf32 ? 4 : 2;
    const struct {
      std::int64_t stride;
      bool used;
      std::uintptr_t elem;
    } strides[] = {{g.lda, g.a_mn ? g.k > 1 : g.m > 1, in_size}, {g.ldb, g.b_mn ? g.k > 1 : g.n > 1, in_size},
                   {g.ldc, g.m > 1, out_size},         {g.stride_a, g.batch > 1, in_size},
                   {g.stride_b, g.batch > 1, in_size}, {g.stride_c, g.batch > 1, out_size}};
    for (const auto& s : strides)
      if (s.used && s.stride != 0) align = std::min(align, alignment_of(static_cast<std::uintptr_t>(s.stride) * s.elem));
    if (align < 16)
      return Status::fail(ErrorKind::unsupported, "gemm_wgmma: TMA needs 16-byte aligned pointers, pitches and batch "
                                                  "strides, the arguments have " + std::to_string(align) + "-byte alignment");
    if (is_3xtf32(p) && g.m > 0 && g.n > 0 && g.batch > 0) {
      const Status st = split_operands_3xtf32(a, b, p, workspace, g, stream.handle());
      if (!st.ok()) return st;
    } else if (kWgmmaConfigs[config_index].splits > 1) {  // split k: the workspace holds the partials
      g.partials = workspace;
      const WgmmaSplitPlan plan = split_plan(p, config_index);
      if (plan.splits > 1 && workspace == nullptr)
        return Status::fail(ErrorKind::argument, "gemm_wgmma: split k (splits=" + std::to_string(kWgmmaConfigs[config_index].splits) +
                                                     ") needs a workspace of " + std::to_string(plan.bytes) +
                                                     " bytes, got none");
    }
    return launch_wgmma(g, config_index, stream.handle());
  } catch (const std::exception& e) {
    return Status::fail(ErrorKind::internal, std::string("gemm_wgmma: ") + e.what());
  }
}

// A config bound once: the memo-hit path skips the config lookup; the tensor-map entry point was
// resolved in prepare().
class PreparedWgmma final : public PreparedLaunch {
 public:
  PreparedWgmma(int config_index, int sms) : config_index_(config_index), sms_(sms) {}
  Status run(const Args& args, const Problem& p, void* workspace, Stream stream) const override {
    return run_wgmma(config_index_, sms_, args, p, workspace, stream);
  }

 private:
  int config_index_;
  int sms_;  // sizes the persistent grid
};

class GemmWgmma final : public Variant {
 public:
  GemmWgmma()
      : Variant({"gemm_wgmma", "gemm", DeviceKind::cuda, {DType::bf16, DType::f16, DType::f32}, kWgmmaPriority,
                 "Hopper f16/bf16 (and f32 as TF32 with allow_tf32=1, 3xTF32 with allow_tf32=2) tensor cores: "
                 "wgmma fed by TMA, warp-specialised, persistent (sm_90a); A and B row- or column-major (TF32: "
                 "row-major A, column-major B), C f32 or the input type, batched"},
                wgmma_space()) {}

  Config default_config(const DeviceInfo& d) const override { return wgmma_default(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override { return wgmma_default_for(d, p); }

  Support supports(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    try {
      const bool tf32 = p.dtype == DType::f32;
      if (p.dtype != DType::bf16 && p.dtype != DType::f16 && !tf32)
        return Support::no("computes f16 and bf16 inputs (and f32 as TF32) only, this problem has " +
                           std::string(dtype_name(p.dtype)));
      // f32 runs only on the TF32 tensor cores, where the caller allowed them: as TF32
      // (allow_tf32 = 1) or 3xTF32 (2, fp32-level error); never for allow_tf32 = 0 (IEEE fp32).
      if (tf32 && p.dims[kDimTf32] != 1 && p.dims[kDimTf32] != 2)
        return Support::no("computes f32 inputs on the TF32 tensor cores only: needs allow_tf32=1 (TF32) or 2 "
                           "(3xTF32), this problem has allow_tf32=" + std::to_string(p.dims[kDimTf32]));
      const bool split3 = is_3xtf32(p);
      if (d.cc_major != 9 || d.cc_minor != 0)
        return Support::no("sm_90a code (wgmma, TMA) runs on compute capability 9.0 only, device has " +
                           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      const bool a_mn = p.dims[kDimTa] == 1, b_mn = p.dims[kDimTb] == 0;
      // (3xTF32 reads any layout: its prepass writes K-major parts.)
      if (tf32 && !split3 && (a_mn || b_mn))
        return Support::no("TF32 wgmma reads K-major operands only: a row-major A (ta = 0) and a column-major B "
                           "(tb = 1)");
      for (int i : {kDimM, kDimN, kDimK})
        if (p.dims[i] > INT_MAX)
          return Support::no(std::string("extent ") + "mnk"[i] + " = " + std::to_string(p.dims[i]) +
                             " exceeds the kernel's 32-bit indices");
      if (p.dims[kDimBatch] > INT_MAX) return Support::no("batch exceeds 2^31 - 1");
      if (p.align_bytes < 16)
        return Support::no("TMA needs 16-byte aligned pointers and pitches; this problem has " +
                           std::to_string(p.align_bytes) + "-byte alignment");
      const int i = wgmma_index(c);
      if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
      if (tf32 && !split3 && !wgmma_tf32_row(i))
        return Support::no("config " + c.to_string() + " is not built for TF32 (kWgmmaTf32Rows)");
      if (split3 && kWgmmaConfigs[i].splits > 1)
        return Support::no("config " + c.to_string() + ": 3xTF32 does not split k (its workspace holds the split "
                           "operands)");
      if (split3 && !wgmma_3xtf32_row(i))
        return Support::no("config " + c.to_string() + " is not built for 3xTF32 (kWgmma3xTf32Rows)");
      if (!split3 && split_plan(p, i).bytes > kWgmmaSplitMaxWorkspace)
        return Support::no("split k (splits=" + std::to_string(kWgmmaConfigs[i].splits) + ") would need " +
                           std::to_string(split_plan(p, i).bytes) + " bytes of partials (limit " +
                           std::to_string(kWgmmaSplitMaxWorkspace) + "); problems this large have tiles enough");
      if (split3 && p.dims[kDimK] > kWgmma3xTf32MaxK)
        return Support::no("3xTF32 on wgmma: k = " + std::to_string(p.dims[kDimK]) + " exceeds " +
                           std::to_string(kWgmma3xTf32MaxK) +
                           " (the tensor cores' f32 accumulation error grows with k, past the 1e-4 tolerance "
                           "near k = 65536)");
      if (split3) {
        const std::size_t bytes = workspace_3xtf32(p).bytes;
        if (bytes > kWgmma3xTf32MaxWorkspace)
          return Support::no("3xTF32 would split A and B into a workspace of " + std::to_string(bytes) +
                             " bytes (limit " + std::to_string(kWgmma3xTf32MaxWorkspace) + ")");
      }
      if (!split3 && (a_mn || b_mn) && !wgmma_layout_row(i, a_mn, b_mn))
        return Support::no("config " + c.to_string() +
                           " is not built for this layout of A and B (kWgmmaMnRows, kWgmmaMnBRows" +
                           (kWgmmaConfigs[i].swap ? std::string("; a swapped small-m row reads X = A K-major: a "
                                                                "row-major A, ta = 0, only)")
                                                  : std::string(")")));
      // The switches come last: a path switched off declines exactly what it would have run.
      if (tf32 && !split3 && !kWgmmaTf32Enabled)
        return Support::no("the TF32 path is switched off (kWgmmaTf32Enabled)");
      if (split3 && !kWgmma3xTf32Enabled)
        return Support::no("the 3xTF32 path is switched off (kWgmma3xTf32Enabled)");
      if (!split3 && a_mn && !kWgmmaMnAEnabled)
        return Support::no("a column-major A (ta = 1) is switched off (kWgmmaMnAEnabled): reads a row-major A only");
      if (!split3 && b_mn && !kWgmmaMnBEnabled)
        return Support::no("a row-major B (tb = 0) is switched off (kWgmmaMnBEnabled): reads a column-major B only");
      const WgmmaConfig& r = kWgmmaConfigs[i];
      if (((p.dims[kDimM] + r.bm - 1) / r.bm) * ((p.dims[kDimN] + r.bn - 1) / r.bn) > INT_MAX)
        return Support::no("more than 2^31 - 1 tiles per batch entry");
      std::string why;
      if (!wgmma_tensor_maps_available(why)) return Support::no(why);
      return Support::yes();
    } catch (const std::exception& e) {
      return Support::no(std::string("gemm_wgmma: ") + e.what());
    }
  }

  // 3xTF32: the operands' hi and lo parts (wgmma_3xtf32.hpp); split k: the f32 partials
  // (wgmma_split_k.hpp).
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override {
    if (is_3xtf32(p)) return workspace_3xtf32(p).bytes;
    const int i = wgmma_index(c);
    return i >= 0 ? split_plan(p, i).bytes : 0;
  }

  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const int i = wgmma_index(c);
    if (i < 0) return Status::fail(ErrorKind::argument, "gemm_wgmma: config " + c.to_string() + " is not instantiated");
    return run_wgmma(i, sm_count(p.device), args, p, workspace, stream);
  }

  std::shared_ptr<const PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo& d) const override {
    try {
      const int i = wgmma_index(c);
      std::string why;
      if (i < 0 || !wgmma_tensor_maps_available(why)) return Variant::prepare(p, c, d);  // launch() reports it
      return std::make_shared<PreparedWgmma>(i, d.sm_count);
    } catch (const std::exception&) {
      return nullptr;
    }
  }
};

}  // namespace

std::shared_ptr<Variant> make_gemm_wgmma_variant() { return std::make_shared<GemmWgmma>(); }

}  // namespace kiln::gemm
