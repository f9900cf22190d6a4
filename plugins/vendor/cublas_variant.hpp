// CublasVariant: a VendorVariant that calls cuBLAS.  It asks for kCublasWorkspaceBytes of
// workspace, which launch() hands to the device's handle (see cublas_context.hpp), so cuBLAS
// allocates nothing while a launch is queued.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cublas_context.hpp"
#include "vendor_variant.hpp"

namespace kiln::vendor {

class CublasVariant : public VendorVariant {
 public:
  using VendorVariant::VendorVariant;
  std::size_t workspace_bytes(const Problem&, const Config&) const override { return kCublasWorkspaceBytes; }
};

}  // namespace kiln::vendor
