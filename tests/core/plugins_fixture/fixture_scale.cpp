#include "fixture_scale.hpp"

#include <memory>
#include <string>

#include <kiln/op_schema.hpp>
#include <kiln/variant.hpp>

namespace {

double factor_of(const kiln::Args& args) { return args.scalar_count() > 0 ? args.scalar(0) : 2.0; }

kiln::Status scale_on_host(const kiln::Args& args, const kiln::Problem& p) {
  const float* x = args.tensor(0).as<const float>();
  float* y = args.tensor(1).as<float>();
  const float factor = static_cast<float>(factor_of(args));
  for (std::int64_t i = 0; i < p.dim(0); ++i) y[i] = factor * x[i];
  return {};
}

std::shared_ptr<kiln::OpSchema> make_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "fixture_scale";
  s->summary = "y = factor * x (plugin loader test fixture)";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->scalars = {{"factor", 2.0}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->work_unit = kiln::WorkUnit::byte;
  const kiln::OpSchema* self = s.get();
  s->make_problem = [self](const kiln::Args& args, kiln::Problem& p) {
    for (int i = 0; i < 2; ++i) {
      kiln::Status st = kiln::expect_dtype(*self, args, i, kiln::f32);
      if (!st.ok()) return st;
      st = kiln::expect_rank(*self, args, i, 1);
      if (!st.ok()) return st;
    }
    const std::int64_t n = args.tensor(0).numel();
    kiln::Status st = kiln::expect_shape(*self, args, 1, kiln::Shape::vector(n));
    if (!st.ok()) return st;
    p.dtype = kiln::f32;
    p.n_dims = 1;
    p.dims[0] = n;
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = scale_on_host;
  s->work = [](const kiln::Problem& p) { return 2.0 * 4.0 * static_cast<double>(p.dims[0]); };
  return s;
}

class FixtureScaleHost final : public kiln::Variant {
 public:
  explicit FixtureScaleHost(std::string name)
      : Variant({std::move(name), "fixture_scale", kiln::DeviceKind::host, {kiln::f32}, 0, "host loop", true},
                kiln::ParamSpace()) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& args, const kiln::Problem& p, const kiln::Config&, void*,
                      kiln::Stream) const override {
    return scale_on_host(args, p);
  }
};

kiln::Status register_with(kiln::Registry& registry, const std::string& variant_name) noexcept {
  try {
    registry.add_op(make_schema());
    registry.add_variant(std::make_shared<FixtureScaleHost>(variant_name));
    return {};
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}

}  // namespace

kiln::Status register_fixture_good(kiln::Registry& registry) noexcept {
  return register_with(registry, "fixture_scale_host");
}

kiln::Status register_fixture_rival(kiln::Registry& registry) noexcept {
  return register_with(registry, "fixture_scale_rival");
}
