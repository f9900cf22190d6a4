// VendorVariant: the common shape of every vendor variant — a cuBLAS or CUB call wrapped as an
// ordinary kiln variant with an empty tuning space (the library picks its own kernels), marked
// VariantDesc::vendor so benchmarks can use it as the baseline, and tried at kVendorPriority.
//
//   class DotCublas final : public kiln::vendor::VendorVariant {
//    public:
//     DotCublas() : VendorVariant("dot_cublas", "dot", {kiln::f32}, "cublasSdot, result on the device") {}
//     kiln::Support supports(...) const override;
//     kiln::Status launch(...) const override;
//   };
#pragma once
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kiln/args.hpp>
#include <kiln/op_schema.hpp>
#include <kiln/variant.hpp>

namespace kiln::vendor {

// Above kiln's simple kernels, below the fast kiln variants (50): with no tuned entry, op() runs
// the vendor library rather than a naive kernel.  Tuning compares all of them anyway.
// The untuned default order, from the H200 benchmarks of 2026-11-21 (docs/performance.md): above
// kiln's add, gemv and histogram variants (priority 30; measured 0.94x, 0.99x and 0.87x of the
// vendor), below kiln's reductions, gemm, transpose and topk (priority 50 and up).  Tuned entries
// (configs/h200.yaml) override this wherever they exist.
inline constexpr int kVendorPriority = 35;

class VendorVariant : public Variant {
 public:
  VendorVariant(std::string name, std::string op, std::vector<DType> dtypes, std::string summary,
                int priority = kVendorPriority)
      : Variant(VariantDesc{std::move(name), std::move(op), DeviceKind::cuda, std::move(dtypes), priority,
                            std::move(summary), /*reference=*/false, /*vendor=*/true},
                ParamSpace{}) {}

  // The library chooses its own kernel: nothing to tune, the empty config.
  Config default_config(const DeviceInfo&) const override { return Config{}; }
};

// The extent called `name` in `p`, or `fallback` when the problem's schema has no such dim.
// Never throws (Problem::dim does).
inline std::int64_t dim_or(const Problem& p, std::string_view name, std::int64_t fallback) {
  if (p.schema == nullptr) return fallback;
  const int i = p.schema->dim_index(name);
  return (i >= 0 && i < p.n_dims) ? p.dims[i] : fallback;
}

// Scalar `i` of a call, or `fallback` when the caller passed fewer scalars.
inline double scalar_or(const Args& args, int i, double fallback) {
  return i < args.scalar_count() ? args.scalar(i) : fallback;
}

// cuBLAS and the CUB entry points used here take int extents and leading dimensions.
inline bool fits_int(std::int64_t v) { return v >= 0 && v <= INT_MAX; }

// "`what` = v exceeds 2^31-1 (<library> takes int)", the reason supports() gives.
inline Support int_limit(const char* what, std::int64_t v, const char* library) {
  if (fits_int(v)) return Support::yes();
  return Support::no(std::string(what) + " = " + std::to_string(v) + " exceeds 2^31-1 (" + library + " takes int)");
}

}  // namespace kiln::vendor
