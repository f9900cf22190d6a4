// Variant: one implementation of an op — its tuning space, defaults, what it supports and its
// launch.  Subclass it next to the kernel; methods never throw (they run inside the plugin):
// supports() returns a Support with a reason, launch() returns a Status.
//
//   class AddGridStride final : public kiln::Variant {
//    public:
//     AddGridStride() : Variant({"add_grid_stride", "add", kiln::DeviceKind::cuda, {kiln::f32}, 20},
//                               kiln::ParamSpace().param("block", {128, 256, 512}).param("items", {1, 4})) {}
//     kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"block", 256}, {"items", 4}}; }
//     kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override;
//     kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*,
//                         kiln::Stream) const override;
//   };
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/args.hpp"
#include "kiln/device.hpp"
#include "kiln/errors.hpp"
#include "kiln/param_space.hpp"
#include "kiln/problem.hpp"
#include "kiln/stream.hpp"

namespace kiln {

struct Support {
  bool ok = true;
  std::string reason;  // empty when ok
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

struct VariantDesc {
  std::string name;       // unique across all plugins: "gemm_register_blocked"
  std::string op;         // "gemm"
  DeviceKind device_kind = DeviceKind::cuda;
  std::vector<DType> dtypes;
  int priority = 0;       // higher is tried first when no tuned entry applies
  std::string summary;    // one line for `kiln list`
  bool reference = false; // the host reference (the tuner's oracle), never a speed candidate on CUDA
  bool vendor = false;    // a vendor-library baseline (cuBLAS, CUB)
};

// A launch bound once to one problem class and config (the decision's "typed launch"): what a
// memo-hit op() calls.  run() receives the call's arguments (pointers and strides change from
// call to call; dtype, extents, alignment class and device are those of the problem it was
// prepared for).  It must not allocate, build strings on success, take locks or synchronise, and
// must be legal inside CUDA-graph capture.  Never throws: failures come back as a Status.
class PreparedLaunch {
 public:
  virtual ~PreparedLaunch() = default;
  virtual Status run(const Args& args, const Problem& problem, void* workspace, Stream stream) const = 0;
};

class Variant {
 public:
  Variant(VariantDesc desc, ParamSpace space) : desc_(std::move(desc)), space_(std::move(space)) {}
  virtual ~Variant() = default;

  const std::string& name() const { return desc_.name; }
  const std::string& op() const { return desc_.op; }
  DeviceKind device_kind() const { return desc_.device_kind; }
  const std::vector<DType>& dtypes() const { return desc_.dtypes; }
  int priority() const { return desc_.priority; }
  const VariantDesc& desc() const { return desc_; }
  const ParamSpace& space() const { return space_; }

  // The config used when the database has none; must lie in space() for every device.
  virtual Config default_config(const DeviceInfo& device) const = 0;
  // The default for one problem (what dispatch uses); override to adapt the default to the
  // problem, e.g. a scalar-load config for misaligned views.  Defaults to default_config().
  virtual Config default_config_for(const DeviceInfo& device, const Problem& problem) const {
    (void)problem;
    return default_config(device);
  }
  // Whether this variant can run `problem` on `device` with `config` (shape limits, alignment,
  // ...).  Called once per problem on a dispatch miss, never on the hot path.  The core has
  // already checked device kind, dtype and the space's constraints.
  virtual Support supports(const Problem& problem, const DeviceInfo& device, const Config& config) const = 0;
  // supports() as the core and the tuner call it: an exception (a plugin bug: variant methods must
  // not throw) is a "no" with its message, so one bad variant never stops its op.
  Support supports_or_no(const Problem& problem, const DeviceInfo& device, const Config& config) const noexcept;
  // Scratch device memory launch() needs, 0 by default.
  virtual std::size_t workspace_bytes(const Problem& problem, const Config& config) const {
    (void)problem; (void)config;
    return 0;
  }
  // Queues the computation on `stream`; no allocation and no synchronisation (host variants run
  // synchronously).  `workspace` holds workspace_bytes() bytes on the problem's device, which
  // op() and the tuner have made the current CUDA device.  Device properties:
  // kiln::device_info(problem.device), kiln::sm_count(problem.device).
  virtual Status launch(const Args& args, const Problem& problem, const Config& config, void* workspace,
                        Stream stream) const = 0;
  // Binds `config` to its kernel for `problem` once, when a decision is made (outside any CUDA
  // graph capture): resolve the config to a kernel and typed parameters, create library handles.
  // The default wraps launch() with a copy of the config, so variants that do not override it
  // still work.  Returns null only when it cannot bind (the dispatcher then uses the default).
  virtual std::shared_ptr<const PreparedLaunch> prepare(const Problem& problem, const Config& config,
                                                        const DeviceInfo& device) const;

 private:
  VariantDesc desc_;
  ParamSpace space_;
};

}  // namespace kiln
