#include "histogram_host.hpp"

#include <exception>
#include <string>
#include <utility>

#include "histogram_reference.hpp"

namespace kiln::histogram {
namespace {

using ReferenceFn = Status (*)(const Args&, const Problem&);

class HostReference final : public Variant {
 public:
  HostReference(std::string name, std::string op, DType dtype, ReferenceFn fn)
      : Variant(VariantDesc{std::move(name), std::move(op), DeviceKind::host, {dtype}, 0,
                            "host reference (single thread)", /*reference=*/true, /*vendor=*/false},
                ParamSpace{}),
        fn_(fn) {}

  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  Status launch(const Args& args, const Problem& p, const Config&, void*, Stream) const override {
    try {
      return fn_(args, p);
    } catch (const std::exception& e) {
      return Status::fail(ErrorKind::internal, name() + ": " + e.what());
    }
  }

 private:
  ReferenceFn fn_;
};

}  // namespace

std::shared_ptr<Variant> make_histogram_host() {
  return std::make_shared<HostReference>("histogram_host", "histogram", u8, histogram_reference);
}

std::shared_ptr<Variant> make_histogram_range_host() {
  return std::make_shared<HostReference>("histogram_range_host", "histogram_range", f32, histogram_range_reference);
}

}  // namespace kiln::histogram
