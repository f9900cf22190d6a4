#include "reduction_host.hpp"

#include <string>
#include <utility>
#include <vector>

#include "reduction_reference.hpp"

namespace kiln::reduction {
namespace {

using ReferenceFn = Status (*)(const Args&, const Problem&);

class ReductionHost final : public Variant {
 public:
  ReductionHost(std::string name, std::string op, std::vector<DType> dtypes, ReferenceFn reference)
      : Variant(VariantDesc{std::move(name), std::move(op), DeviceKind::host, std::move(dtypes), 0,
                            "host loop, double (f32, f16, bf16) or modulo 2^32 (i32) accumulation: the reference",
                            /*reference=*/true},
                ParamSpace{}),
        reference_(reference) {}

  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  // Synchronous: the host has no stream to queue on.
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream) const override {
    return reference_(args, problem);
  }

 private:
  ReferenceFn reference_;
};

}  // namespace

std::shared_ptr<const Variant> make_dot_host() {
  return std::make_shared<ReductionHost>("dot_host", "dot", std::vector<DType>{DType::f32, DType::f16, DType::bf16},
                                         &dot_reference);
}

std::shared_ptr<const Variant> make_reduce_sum_host() {
  return std::make_shared<ReductionHost>("reduce_sum_host", "reduce_sum", std::vector<DType>{DType::f32, DType::i32, DType::f16, DType::bf16},
                                         &reduce_sum_reference);
}

}  // namespace kiln::reduction
