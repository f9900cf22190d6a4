// CublasVariant: a VendorVariant that calls cuBLAS.  It asks for kCublasWorkspaceBytes of
// workspace, which launch() hands to the device's handle (cublasSetWorkspace, see
// cublas_context.hpp), so cuBLAS allocates nothing while a launch is queued; prepare() creates
// the handle when op() decides, so a memo-hit launch can be captured in a CUDA graph.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cublas_context.hpp"
#include "cuda_support.hpp"
#include "vendor_variant.hpp"

namespace kiln::vendor {

class CublasVariant : public VendorVariant {
 public:
  using VendorVariant::VendorVariant;
  std::size_t workspace_bytes(const Problem&, const Config&) const override { return kCublasWorkspaceBytes; }
  std::shared_ptr<const PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo& d) const override {
    ScopedDevice on(p.device.ordinal);
    // A failure here is not fatal: launch() tries again and reports it.
    if (on.ok()) (void)ensure_cublas_handle(name().c_str(), p.device.ordinal);
    return VendorVariant::prepare(p, c, d);
  }
};

}  // namespace kiln::vendor
