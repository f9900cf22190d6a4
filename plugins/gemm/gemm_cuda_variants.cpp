// The CUDA gemm variants: adapters from (Args, Problem, Config) to the launchers in
// gemm_launch.hpp.  Built only with the CUDA backend (CUDA_SOURCES).
//
// A config is bound to its launcher once (bind(): the compile-time row index or the block sizes,
// the split-k plan, whether 16-byte alignment is needed), when op() makes its decision
// (prepare()); a memo-hit launch then only fills GemmArgs from the call's tensors and calls the
// launcher: no string, map or Config lookup per call.  launch() (the tuner's path) binds per call.
#include <algorithm>
#include <climits>
#include <exception>
#include <string>

#include "gemm_launch.hpp"
#include "gemm_params.hpp"
#include "gemm_schema.hpp"
#include "gemm_variants.hpp"
#include "register_blocked_configs.hpp"
#include "split_k_plan.hpp"
#include "tf32_mma_configs.hpp"

namespace kiln::gemm {
namespace {

constexpr std::int64_t kMaxGridY = 65535;
// Above gemm_register_blocked (50) for the callers who opt in (allow_tf32=2): at 4096^3 on the
// H200 it measured faster than every SIMT config, at fp32-level error (README, "Measured");
// below gemm_tf32_mma, which is faster still where the caller allows TF32 rounding.
constexpr int k3xTf32Priority = 55;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// What every CUDA gemm variant shares: int-sized extents, GemmArgs from Args, and no exception
// ever leaving supports() or launch().
class GemmCudaVariant : public Variant {
 public:
  using DefaultFn = Config (*)(const DeviceInfo&);
  using DefaultForFn = Config (*)(const DeviceInfo&, const Problem&);
  GemmCudaVariant(VariantDesc desc, ParamSpace space, DefaultFn default_fn, DefaultForFn default_for = nullptr)
      : Variant(std::move(desc), std::move(space)), default_fn_(default_fn), default_for_(default_for) {}

  Config default_config(const DeviceInfo& d) const override { return default_fn_(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override {
    return default_for_ ? default_for_(d, p) : default_fn_(d);
  }

  Support supports(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    try {
      std::string why;
      if (!gemm_is_plain_f32(p, why)) return Support::no(why);
      for (int i : {kDimM, kDimN, kDimK})
        if (p.dims[i] > INT_MAX)
          return Support::no(std::string("extent ") + "mnk"[i] + " = " + std::to_string(p.dims[i]) +
                             " exceeds the kernels' 32-bit indices");
      return check(p, d, c);
    } catch (const std::exception& e) {
      return Support::no(name() + ": " + e.what());
    }
  }

  // A config resolved to what its launcher takes.
  struct Bound {
    int a = 0, b = 0;      // the launcher's integer parameters (row index, tile or block sizes)
    bool align16 = false;  // issues 16-byte global accesses: checked against the real pointers
    SplitKPlan plan;       // gemm_split_k only
  };

  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    try {
      Bound bound;
      if (!bind(c, p, bound))
        return Status::fail(ErrorKind::argument, name() + ": config " + c.to_string() + " is not instantiated");
      return run_with(bound, c, args, p, workspace, stream);
    } catch (const std::exception& e) {
      return Status::fail(ErrorKind::internal, name() + ": " + e.what());
    }
  }

  std::shared_ptr<const PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo&) const override;

  // The launch with a bound config: GemmArgs from the tensors, the alignment check, the launcher.
  // Builds no string unless something is wrong.
  Status run_with(const Bound& bound, const Config& c, const Args& args, const Problem& p, void* workspace,
                  Stream stream) const noexcept {
    try {
      if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, name() + ": needs a, b, c");
      const TensorRef& a = args.tensor(kA);
      const TensorRef& b = args.tensor(kB);
      const TensorRef& cc = args.tensor(kC);
      GemmArgs g;
      g.a = a.as<const float>();
      g.b = b.as<const float>();
      g.c = cc.as<float>();
      g.m = static_cast<int>(a.rows());
      g.k = static_cast<int>(a.cols());
      g.n = static_cast<int>(b.cols());
      g.lda = a.row_stride;
      g.ldb = b.row_stride;
      g.ldc = cc.row_stride;
      g.alpha = static_cast<float>(gemm_scalar(args, kAlpha));
      g.beta = static_cast<float>(gemm_scalar(args, kBeta));
      // supports() judged the problem's alignment class; the pointers themselves are checked
      // again, so a caller who passes a mislabelled problem gets a Status, not a device fault.
      if (bound.align16) {
        int align = 16;
        for (const TensorRef* t : {&a, &b, &cc}) {
          align = std::min(align, alignment_of(reinterpret_cast<std::uintptr_t>(t->data)));
          if (t->rows() > 1) align = std::min(align, alignment_of(static_cast<std::uintptr_t>(t->row_stride) * 4));
        }
        if (align < 16)
          return Status::fail(ErrorKind::unsupported, name() + " [" + c.to_string() + "]: needs 16-byte aligned pointers and "
                                                      "row pitches, the arguments have " + std::to_string(align) + "-byte alignment");
      }
      return run_bound(g, bound, p, workspace, stream.handle());
    } catch (const std::exception& e) {
      return Status::fail(ErrorKind::internal, name() + ": " + e.what());
    }
  }

 protected:
  virtual Support check(const Problem&, const DeviceInfo&, const Config&) const { return Support::yes(); }
  // Resolves `c` for problem `p` into `out`; false when the config is not instantiated.
  virtual bool bind(const Config& c, const Problem& p, Bound& out) const = 0;
  virtual Status run_bound(const GemmArgs& g, const Bound& b, const Problem& p, void* workspace, void* stream) const = 0;

  static Support grid_y_fits(const Problem& p, std::int64_t rows_per_block) {
    const std::int64_t blocks = ceil_div(p.dims[kDimM], rows_per_block);
    if (blocks > kMaxGridY)
      return Support::no("m = " + std::to_string(p.dims[kDimM]) + " needs " + std::to_string(blocks) +
                         " block rows, above the grid limit 65535");
    return Support::yes();
  }
  static Support tiles_fit(const Problem& p, int bm, int bn) {
    if (ceil_div(p.dims[kDimM], bm) * ceil_div(p.dims[kDimN], bn) > INT_MAX)
      return Support::no("more than 2^31 - 1 tiles");
    return Support::yes();
  }
  static Support aligned16(const Problem& p, const char* why) {
    if (p.align_bytes < 16)
      return Support::no(std::string(why) + " needs 16-byte aligned pointers and row pitches; this problem has " +
                         std::to_string(p.align_bytes) + "-byte alignment");
    return Support::yes();
  }

 private:
  DefaultFn default_fn_;
  DefaultForFn default_for_;
};

// A gemm config bound once (GemmCudaVariant::prepare): the memo-hit launch path.
class PreparedGemm final : public PreparedLaunch {
 public:
  PreparedGemm(const GemmCudaVariant* v, GemmCudaVariant::Bound bound, Config config)
      : variant_(v), bound_(bound), config_(std::move(config)) {}
  Status run(const Args& args, const Problem& p, void* workspace, Stream stream) const override {
    return variant_->run_with(bound_, config_, args, p, workspace, stream);
  }

 private:
  const GemmCudaVariant* variant_;
  GemmCudaVariant::Bound bound_;
  Config config_;  // for error messages only
};

std::shared_ptr<const PreparedLaunch> GemmCudaVariant::prepare(const Problem& p, const Config& c,
                                                               const DeviceInfo& d) const {
  try {
    Bound bound;
    if (!bind(c, p, bound)) return Variant::prepare(p, c, d);  // launch() reports the bad config
    return std::make_shared<PreparedGemm>(this, bound, c);
  } catch (const std::exception&) {
    return nullptr;  // the dispatcher falls back to the default binding
  }
}

VariantDesc cuda_desc(const char* name, int priority, const char* summary) {
  return {name, "gemm", DeviceKind::cuda, {DType::f32}, priority, summary};
}

class GemmNaive final : public GemmCudaVariant {
 public:
  GemmNaive()
      : GemmCudaVariant(cuda_desc("gemm_naive", 5, "one thread per C element, operands from global memory"), naive_space(),
                        naive_default) {}
  Support check(const Problem& p, const DeviceInfo&, const Config& c) const override {
    return grid_y_fits(p, c.get("block_y"));
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = c.get("block_x");
    out.b = c.get("block_y");
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_naive(g, b.a, b.b, s);
  }
};

class GemmRowPerBlock final : public GemmCudaVariant {
 public:
  GemmRowPerBlock()
      : GemmCudaVariant(cuda_desc("gemm_row_per_block", 10, "one block per C row, the A row staged in shared memory"),
                        row_per_block_space(), row_per_block_default) {}
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = c.get("block");
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_row_per_block(g, b.a, s);
  }
};

class GemmTiled final : public GemmCudaVariant {
 public:
  GemmTiled()
      : GemmCudaVariant(cuda_desc("gemm_tiled", 20, "shared-memory tiles, one thread per C element (chessboard)"),
                        tiled_space(), tiled_default) {}
  Support check(const Problem& p, const DeviceInfo&, const Config& c) const override {
    return grid_y_fits(p, c.get("tile"));
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = c.get("tile");
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_tiled(g, b.a, s);
  }
};

class GemmTiledCoalesced final : public GemmCudaVariant {
 public:
  GemmTiledCoalesced()
      : GemmCudaVariant(cuda_desc("gemm_tiled_coalesced", 30, "shared-memory tiles, A tile stored transposed and padded"),
                        tiled_coalesced_space(), tiled_coalesced_default) {}
  Support check(const Problem& p, const DeviceInfo&, const Config& c) const override {
    return grid_y_fits(p, c.get("tile"));
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = c.get("tile");
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_tiled_coalesced(g, b.a, s);
  }
};

class GemmTiledKahan final : public GemmCudaVariant {
 public:
  GemmTiledKahan()
      : GemmCudaVariant(cuda_desc("gemm_tiled_kahan", 15, "shared-memory tiles with Kahan-compensated sums (accuracy)"),
                        tiled_kahan_space(), tiled_kahan_default) {}
  Support check(const Problem& p, const DeviceInfo&, const Config& c) const override {
    return grid_y_fits(p, c.get("tile"));
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = c.get("tile");
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_tiled_kahan(g, b.a, s);
  }
};

class GemmRegisterBlocked final : public GemmCudaVariant {
 public:
  GemmRegisterBlocked()
      : GemmCudaVariant(cuda_desc("gemm_register_blocked", 50,
                             "register-blocked SIMT SGEMM: block tile in multi-buffered shared memory "
                             "(register staging or cp.async), TM x TN outputs per thread"),
                        register_blocked_space(), register_blocked_default, register_blocked_default_for) {}
  Support check(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    const int i = register_blocked_index(c);
    if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
    const RegisterBlockedConfig& r = kRegisterBlockedConfigs[i];
    if (r.cp_async && d.cc_major < 8)
      return Support::no("cp_async=1 needs compute capability 8.0 or newer, device has " +
                         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    if (r.vec == 4) {
      Support s = aligned16(p, "vec=4 (float4 loads and stores)");
      if (!s) return s;
    }
    return tiles_fit(p, r.bm, r.bn);
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = register_blocked_index(c);
    if (out.a < 0) return false;
    out.align16 = kRegisterBlockedConfigs[out.a].vec == 4;
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_register_blocked(g, b.a, s);
  }
};

// Split k: the register-blocked kernel with one grid row per k slice writes partial products to
// the workspace, a second kernel adds them in slice order into C.  For problems with few output
// tiles and a deep k (128 x 128 x 65536: four 64 x 64 tiles), where one block per tile would leave
// most SMs idle.  Above gemm_register_blocked in priority, and with the automatic slicing (splits
// = 0, the default) it supports only problems it would cut into two or more slices.
class GemmSplitK final : public GemmCudaVariant {
 public:
  GemmSplitK()
      : GemmCudaVariant(cuda_desc("gemm_split_k", 52,
                             "split k: register-blocked partial products per k slice into a workspace, "
                             "then a deterministic sum into C"),
                        split_k_space(), split_k_default, split_k_default_for) {}
  Support check(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    const int i = split_k_row(c);
    if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
    const RegisterBlockedConfig& r = kRegisterBlockedConfigs[i];
    if (r.vec == 4) {
      Support s = aligned16(p, "vec=4 (float4 loads)");
      if (!s) return s;
    }
    Support s = tiles_fit(p, r.bm, r.bn);
    if (!s) return s;
    const SplitKPlan plan = plan_for(p, c, d.sm_count);
    if (plan.splits < 2)
      return Support::no(c.get("splits") == 0 ? "the automatic slicing keeps k whole here (enough output tiles, or "
                                                "k < 512): gemm_register_blocked does that without a workspace"
                                              : "k too short for two slices");
    const std::int64_t tiles = ceil_div(p.dims[kDimM], r.bm) * ceil_div(p.dims[kDimN], r.bn);
    if (tiles * plan.splits > 8 * std::int64_t(std::max(d.sm_count, 1)))
      return Support::no(std::to_string(tiles) + " tiles x " + std::to_string(plan.splits) +
                         " slices exceed 8 blocks per SM: split k only pays with few output tiles");
    if (plan.workspace_bytes > kSplitKMaxWorkspace)
      return Support::no("the partial sums would take " + std::to_string(plan.workspace_bytes) + " bytes (limit " +
                         std::to_string(kSplitKMaxWorkspace) + ")");
    return Support::yes();
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override {
    return split_k_row(c) < 0 ? 0 : plan_for(p, c, sm_count(p.device)).workspace_bytes;
  }
  bool bind(const Config& c, const Problem& p, Bound& out) const override {
    out.a = split_k_row(c);
    if (out.a < 0) return false;
    out.align16 = kRegisterBlockedConfigs[out.a].vec == 4;
    out.plan = plan_for(p, c, sm_count(p.device));
    return true;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void* workspace, void* stream) const override {
    const int i = b.a;
    const SplitKPlan& plan = b.plan;
    if (plan.splits < 2) return Status::fail(ErrorKind::unsupported, "gemm_split_k: k is not split for this problem");
    if (workspace == nullptr)
      return Status::fail(ErrorKind::argument, "gemm_split_k: needs a workspace of " +
                                                   std::to_string(plan.workspace_bytes) + " bytes, got none");
    GemmArgs part = g;
    part.c = static_cast<float*>(workspace);
    part.ldc = plan.ld;
    part.alpha = 1.0f;
    part.beta = 0.0f;
    part.k_chunk = plan.k_chunk;
    part.split_stride = plan.stride;
    Status st = launch_register_blocked(part, i, stream);
    if (!st.ok()) return st;
    return launch_split_k_reduce(part.c, plan.ld, plan.stride, plan.splits, g, stream);
  }

 private:
  static SplitKPlan plan_for(const Problem& p, const Config& c, int sms) {
    const RegisterBlockedConfig& r = kRegisterBlockedConfigs[split_k_row(c)];
    return split_k_plan(p.dims[kDimM], p.dims[kDimN], p.dims[kDimK], r.bm, r.bn, c.get("splits"), sms);
  }
};

// Chosen by default only for problems with tf32 = 1 (the caller passed allow_tf32 = 1): its
// priority is above gemm_register_blocked, and it supports nothing else.
class GemmTf32Mma final : public GemmCudaVariant {
 public:
  GemmTf32Mma()
      : GemmCudaVariant(cuda_desc("gemm_tf32_mma", 60,
                             "TF32 tensor cores (mma.sync m16n8k8, cp.async pipeline); only with allow_tf32=1"),
                        tf32_mma_space(), tf32_mma_default, tf32_mma_default_for) {}
  Support check(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    if (p.dims[kDimTf32] != 1) return Support::no("rounds inputs to TF32: only for problems with allow_tf32=1");
    if (d.cc_major < 8)
      return Support::no("needs compute capability 8.0 or newer (mma.sync tf32), device has " +
                         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    const int i = tf32_mma_index(c);
    if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
    Support s = aligned16(p, "cp.async 16-byte copies");
    if (!s) return s;
    return tiles_fit(p, kTf32MmaConfigs[i].bm, kTf32MmaConfigs[i].bn);
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = tf32_mma_index(c);
    out.align16 = true;
    return out.a >= 0;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_tf32_mma(g, b.a, s);
  }
};

// fp32-accurate tensor-core gemm (3xTF32): error at fp32 level (verified against the f64 host
// reference by test_gemm_gpu) but not IEEE fp32 (an infinite operand can give NaN through the
// cross terms), so it serves only callers who opt in with allow_tf32=2 (or allow TF32, =1).
class Gemm3xTf32Mma final : public GemmCudaVariant {
 public:
  Gemm3xTf32Mma()
      : GemmCudaVariant(cuda_desc("gemm_3xtf32_mma", k3xTf32Priority,
                             "fp32-accurate tensor cores: 3xTF32 (big/small operand split, three mma.sync "
                             "m16n8k8 per tile, cp.async pipeline)"),
                        tf32_mma_space(), tf32_mma_default, tf32_mma_default_for) {}
  Support check(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    if (p.dims[kDimTf32] == 0)
      return Support::no("3xTF32 is fp32-accurate but not IEEE for inf/NaN: only with allow_tf32=2 (or 1)");
    if (d.cc_major < 8)
      return Support::no("needs compute capability 8.0 or newer (mma.sync tf32), device has " +
                         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    const int i = tf32_mma_index(c);
    if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
    Support s = aligned16(p, "cp.async 16-byte copies");
    if (!s) return s;
    return tiles_fit(p, kTf32MmaConfigs[i].bm, kTf32MmaConfigs[i].bn);
  }
  bool bind(const Config& c, const Problem&, Bound& out) const override {
    out.a = tf32_mma_index(c);
    out.align16 = true;
    return out.a >= 0;
  }
  Status run_bound(const GemmArgs& g, const Bound& b, const Problem&, void*, void* s) const override {
    return launch_3xtf32_mma(g, b.a, s);
  }
};

}  // namespace

std::vector<std::shared_ptr<Variant>> make_gemm_cuda_variants() {
  return {std::make_shared<GemmNaive>(),          std::make_shared<GemmRowPerBlock>(),
          std::make_shared<GemmTiled>(),          std::make_shared<GemmTiledCoalesced>(),
          std::make_shared<GemmTiledKahan>(),     std::make_shared<GemmRegisterBlocked>(),
          std::make_shared<GemmSplitK>(),
          std::make_shared<GemmTf32Mma>(),       std::make_shared<Gemm3xTf32Mma>()};
}

}  // namespace kiln::gemm
