// gemm_half_mma: the f16 / bf16 tensor-core variant (mma.sync m16n8k16, f32 accumulation), an
// adapter from (Args, Problem, Config) to launch_half_mma.  Built only with the CUDA backend.
// The half-precision path of kiln's own kernels, and the fallback for GPUs before Hopper.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <string>

#include "half_mma_launch.hpp"
#include "gemm_schema.hpp"
#include "gemm_variants.hpp"
#include "half_mma_configs.hpp"
#include "half_mma_params.hpp"

namespace kiln::gemm {
namespace {

// Below the vendor variants (34-35): until measurements say otherwise an untuned op() runs
// cuBLASLt for half inputs, and this kernel where the vendor plugin is absent; the tuner compares
// both wherever it is run.
constexpr int kHalfMmaPriority = 30;

class GemmHalfMma final : public Variant {
 public:
  GemmHalfMma()
      : Variant({"gemm_half_mma", "gemm", DeviceKind::cuda, {DType::bf16, DType::f16}, kHalfMmaPriority,
                 "f16/bf16 tensor cores (mma.sync m16n8k16, f32 accumulation, cp.async pipeline); row-major A, "
                 "B either layout, C f32 or the input type, batched"},
                half_mma_space()) {}

  Config default_config(const DeviceInfo& d) const override { return half_mma_default(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override { return half_mma_default_for(d, p); }

  Support supports(const Problem& p, const DeviceInfo& d, const Config& c) const override {
    try {
      if (p.dtype != DType::bf16 && p.dtype != DType::f16)
        return Support::no("computes f16 and bf16 inputs only, this problem has " + std::string(dtype_name(p.dtype)));
      if (d.cc_major < 8)
        return Support::no("needs compute capability 8.0 or newer (mma.sync f16/bf16), device has " +
                           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      if (p.dims[kDimTa] != 0) return Support::no("reads a row-major A only (ta = 0); gemm_cublaslt takes ta = 1");
      for (int i : {kDimM, kDimN, kDimK})
        if (p.dims[i] > INT_MAX)
          return Support::no(std::string("extent ") + "mnk"[i] + " = " + std::to_string(p.dims[i]) +
                             " exceeds the kernel's 32-bit indices");
      if (p.dims[kDimBatch] > 65535)
        return Support::no("batch = " + std::to_string(p.dims[kDimBatch]) + " exceeds the grid's 65535 rows");
      if (p.align_bytes < 16)
        return Support::no("cp.async 16-byte copies need 16-byte aligned pointers, pitches and batch strides; this "
                           "problem has " + std::to_string(p.align_bytes) + "-byte alignment");
      const int i = half_mma_index(c);
      if (i < 0) return Support::no("config " + c.to_string() + " is not instantiated");
      const HalfMmaConfig& r = kHalfMmaConfigs[i];
      if (((p.dims[kDimM] + r.bm - 1) / r.bm) * ((p.dims[kDimN] + r.bn - 1) / r.bn) > INT_MAX)
        return Support::no("more than 2^31 - 1 tiles");
      return Support::yes();
    } catch (const std::exception& e) {
      return Support::no(std::string("gemm_half_mma: ") + e.what());
    }
  }

  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    try {
      if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm_half_mma: needs a, b, c");
      const TensorRef& a = args.tensor(kA);
      const TensorRef& b = args.tensor(kB);
      const TensorRef& cc = args.tensor(kC);
      const int i = half_mma_index(c);
      if (i < 0) return Status::fail(ErrorKind::argument, "gemm_half_mma: config " + c.to_string() + " is not instantiated");
      HalfGemmArgs g;
      g.a = a.data;
      g.b = b.data;
      g.c = cc.data;
      g.m = static_cast<int>(p.dims[kDimM]);
      g.n = static_cast<int>(p.dims[kDimN]);
      g.k = static_cast<int>(p.dims[kDimK]);
      g.batch = static_cast<int>(p.dims[kDimBatch]);
      g.lda = a.row_stride;
      g.b_col = p.dims[kDimTb] == 1;
      g.ldb = g.b_col ? b.col_stride : b.row_stride;
      g.ldc = cc.row_stride;
      g.stride_a = a.shape.rank == 3 ? a.batch_stride : 0;
      g.stride_b = b.shape.rank == 3 ? b.batch_stride : 0;
      g.stride_c = cc.shape.rank == 3 ? cc.batch_stride : 0;
      g.alpha = static_cast<float>(gemm_scalar(args, kAlpha));
      g.beta = static_cast<float>(gemm_scalar(args, kBeta));
      g.bf16 = p.dtype == DType::bf16;
      g.c_half = p.dims[kDimC16] == 1;
      // supports() judged the alignment class; the real pointers are checked again so that a
      // mislabelled problem gets a Status, not a device fault.
      int align = 16;
      for (const TensorRef* t : {&a, &b, &cc})
        align = std::min(align, alignment_of(reinterpret_cast<std::uintptr_t>(t->data)));
      // A stride matters only along an extent longer than one (as in the core's alignment class).
      const std::size_t out_size = g.c_half ? 2 : 4;
      const struct {
        std::int64_t stride;
        bool used;
        std::size_t elem;
      } strides[] = {{g.lda, g.m > 1, 2},      {g.ldb, (g.b_col ? g.n : g.k) > 1, 2}, {g.ldc, g.m > 1, out_size},
                     {g.stride_a, g.batch > 1, 2}, {g.stride_b, g.batch > 1, 2},        {g.stride_c, g.batch > 1, out_size}};
      for (const auto& s : strides)
        if (s.used && s.stride != 0) align = std::min(align, alignment_of(static_cast<std::uintptr_t>(s.stride) * s.elem));
      if (align < 16)
        return Status::fail(ErrorKind::unsupported, "gemm_half_mma [" + c.to_string() + "]: needs 16-byte aligned "
                                                    "pointers, pitches and batch strides, the arguments have " +
                                                    std::to_string(align) + "-byte alignment");
      return launch_half_mma(g, i, stream.handle());
    } catch (const std::exception& e) {
      return Status::fail(ErrorKind::internal, std::string("gemm_half_mma: ") + e.what());
    }
  }
};

}  // namespace

std::shared_ptr<Variant> make_gemm_half_mma_variant() { return std::make_shared<GemmHalfMma>(); }

}  // namespace kiln::gemm
