#include "fixture_ops.hpp"

#include <exception>
#include <memory>
#include <string>

#include <kiln/op_schema.hpp>
#include <kiln/variant.hpp>

// A vector op y = factor * x over f32 (factor 2 for tuner_scale, 1 for tuner_copy).
std::shared_ptr<kiln::OpSchema> vector_op(const std::string& name, float factor) {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = name;
  s->summary = factor == 1.0f ? "y = x (CLI test fixture)" : "y = 2 x (CLI test fixture)";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->work_unit = kiln::WorkUnit::byte;
  const kiln::OpSchema* self = s.get();
  s->make_problem = [self](const kiln::Args& a, kiln::Problem& p) {
    for (int i = 0; i < 2; ++i) {
      kiln::Status st = kiln::expect_dtype(*self, a, i, kiln::f32);
      if (!st.ok()) return st;
      st = kiln::expect_rank(*self, a, i, 1);
      if (!st.ok()) return st;
    }
    kiln::Status st = kiln::expect_shape(*self, a, 1, a.tensor(0).shape);
    if (!st.ok()) return st;
    p.dtype = kiln::f32;
    p.n_dims = 1;
    p.dims[0] = a.tensor(0).numel();
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = [factor](const kiln::Args& a, const kiln::Problem& p) {
    const float* x = a.tensor(0).as<const float>();
    float* y = a.tensor(1).as<float>();
    for (std::int64_t i = 0; i < p.dims[0]; ++i) y[i] = factor * x[i];
    return kiln::Status();
  };
  s->work = [](const kiln::Problem& p) { return 8.0 * static_cast<double>(p.dims[0]); };
  return s;
}

namespace {

// A host loop over y = factor * x: `unroll` elements per step, or blocks of `block`; with
// skip_last, leaves the last element unwritten when mode == 1.
class HostLoop final : public kiln::Variant {
 public:
  HostLoop(kiln::VariantDesc desc, kiln::ParamSpace space, kiln::Config def, float factor)
      : Variant(std::move(desc), std::move(space)), default_(std::move(def)), factor_(factor) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return default_; }
  kiln::Support supports(const kiln::Problem& p, const kiln::DeviceInfo&, const kiln::Config& c) const override {
    if (c.has("block") && p.dims[0] > 0 && c.get("block") > 4 * p.dims[0])
      return kiln::Support::no("block larger than 4 n");
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config& c, void*,
                      kiln::Stream) const override {
    const float* x = a.tensor(0).as<const float>();
    float* y = a.tensor(1).as<float>();
    std::int64_t n = p.dims[0];
    if (c.get_or("mode", 0) == 1 && n > 0) --n;  // the bug the tests look for
    const std::int64_t step = c.get_or("unroll", 1);
    std::int64_t i = 0;
    for (; i + step <= n; i += step)
      for (std::int64_t k = 0; k < step; ++k) y[i + k] = factor_ * x[i + k];
    for (; i < n; ++i) y[i] = factor_ * x[i];
    return kiln::Status();
  }

 private:
  kiln::Config default_;
  float factor_;
};

kiln::VariantDesc desc(const std::string& name, const std::string& op, int priority, bool reference, const char* summary) {
  kiln::VariantDesc d{name, op, kiln::DeviceKind::host, {kiln::f32}, priority, summary};
  d.reference = reference;
  return d;
}

}  // namespace

kiln::Status register_tuner_fixture(kiln::Registry& r) noexcept {
  try {
    r.add_op(vector_op("tuner_scale", 2.0f));
    r.add_variant(std::make_shared<HostLoop>(desc("tuner_scale_ref", "tuner_scale", 0, true, "plain loop (reference)"),
                                             kiln::ParamSpace(), kiln::Config(), 2.0f));
    r.add_variant(std::make_shared<HostLoop>(desc("tuner_scale_unrolled", "tuner_scale", 10, false, "unrolled loop"),
                                             kiln::ParamSpace().param("unroll", {1, 2, 4, 8}), kiln::Config{{"unroll", 4}},
                                             2.0f));
    kiln::ParamSpace blocked;
    blocked.param("unroll", {1, 2}).param("block", {16, 256, 4096});
    blocked.constraint("unroll * block <= 4096", [](const kiln::Config& c, const kiln::DeviceInfo&, const kiln::Problem&) {
      return c.get("unroll") * c.get("block") <= 4096;
    });
    r.add_variant(std::make_shared<HostLoop>(desc("tuner_scale_blocked", "tuner_scale", 5, false, "blocked loop"), blocked,
                                             kiln::Config{{"unroll", 1}, {"block", 256}}, 2.0f));
    return kiln::Status();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}

kiln::Status register_tuner_broken(kiln::Registry& r) noexcept {
  try {
    r.add_op(vector_op("tuner_copy", 1.0f));
    r.add_variant(std::make_shared<HostLoop>(desc("tuner_copy_ref", "tuner_copy", 0, true, "plain loop (reference)"),
                                             kiln::ParamSpace(), kiln::Config(), 1.0f));
    r.add_variant(std::make_shared<HostLoop>(desc("tuner_copy_skiplast", "tuner_copy", 10, false,
                                                  "mode=1 forgets the last element"),
                                             kiln::ParamSpace().param("mode", {0, 1}), kiln::Config{{"mode", 1}}, 1.0f));
    return kiln::Status();
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}
