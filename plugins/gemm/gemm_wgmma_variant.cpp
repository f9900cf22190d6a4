// gemm_wgmma: kiln's Hopper bf16 / f16 / TF32 gemm (wgmma fed by TMA, warp-specialised, persistent), an
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
#include "wgmma_configs.hpp"
#include "wgmma_launch.hpp"
#include "wgmma_params.hpp"

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

// The per-call part of a launch: arguments from the tensors, alignment re-checked (a mislabelled
// problem gets a Status, not a device fault).  Builds no string unless something is wrong.
Status run_wgmma(int config_index, int sms, const Args& args, const Problem& p, Stream stream) noexcept {
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
  Status run(const Args& args, const Problem& p, void*, Stream stream) const override {
    return run_wgmma(config_index_, sms_, args, p, stream);
  }

 private:
  int config_index_;
  int sms_;  // sizes the persistent grid
};

class GemmWgmma final : public Variant {
 public:
  GemmWgmma()
      : Variant({"gemm_wgmma", "gemm", DeviceKind::cuda, {DType::bf16, DType::f16, DType::f32}, kWgmmaPriority,
                 "Hopper f16/bf16 (and TF32 with allow_tf32=1) tensor cores: wgmma fed by TMA, warp-specialised, "
                 "persistent (sm_90a); A and B row- or column-major (TF32: row-major A, column-major B), C f32 or "
                 "the input type, batched"},
                wgmma_space()) {}

  Config default_config(const DeviceInfo& d) const override { return wgmma_default(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override { return wgmma_default_for(d, p); }

  Support supports(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    try {
      const bool tf32 = p.dtype == DType::f32;
      if (p.dtype != DType::bf16 && p.dtype != DType::f16 && !tf32)
        return Support::no("computes f16 and bf16 inputs (and f32 as TF32) only, this problem has " +
                           std::string(dtype_name(p.dtype)));
      // f32 runs only as TF32, and only where the caller allowed TF32 rounding: never for
      // allow_tf32 = 0 (IEEE fp32) nor 2 (3xTF32, fp32-accurate: not built here).
      if (tf32 && p.dims[kDimTf32] != 1)
        return Support::no("computes f32 inputs as TF32 only: needs allow_tf32=1, this problem has allow_tf32=" +
                           std::to_string(p.dims[kDimTf32]));
      if (d.cc_major != 9 || d.cc_minor != 0)
        return Support::no("sm_90a code (wgmma, TMA) runs on compute capability 9.0 only, device has " +
                           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      const bool a_mn = p.dims[kDimTa] == 1, b_mn = p.dims[kDimTb] == 0;
      if (tf32 && (a_mn || b_mn))
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
      if (tf32 && !wgmma_tf32_row(i))
        return Support::no("config " + c.to_string() + " is not built for TF32 (kWgmmaTf32Rows)");
      if ((a_mn || b_mn) && !wgmma_mn_row(i))
        return Support::no("config " + c.to_string() +
                           " is not built for a column-major A or a row-major B (kWgmmaMnRows)");
      // The switches come last: a path switched off declines exactly what it would have run.
      if (tf32 && !kWgmmaTf32Enabled) return Support::no("the TF32 path is switched off (kWgmmaTf32Enabled)");
      if (a_mn && !kWgmmaMnAEnabled)
        return Support::no("a column-major A (ta = 1) is switched off (kWgmmaMnAEnabled): reads a row-major A only");
      if (b_mn && !kWgmmaMnBEnabled)
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

  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    const int i = wgmma_index(c);
    if (i < 0) return Status::fail(ErrorKind::argument, "gemm_wgmma: config " + c.to_string() + " is not instantiated");
    return run_wgmma(i, sm_count(p.device), args, p, stream);
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
