// A tiny host-only op for core tests: scale (y = factor * x) with two variants whose launches
// record which variant and config ran, so dispatch decisions can be observed.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include <kiln/kiln.hpp>

#include "test_util.hpp"

namespace kiln_test {

struct LastRun {
  std::string variant;
  kiln::Config config;
  int count = 0;
};
inline LastRun& last_run() {
  static LastRun r;
  return r;
}

inline std::shared_ptr<kiln::OpSchema> scale_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "scale";
  s->summary = "y = factor * x";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->scalars = {{"factor", 2.0}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->make_problem = [s = s.get()](const kiln::Args& a, kiln::Problem& p) {
    for (int i = 0; i < 2; ++i)
      if (auto st = kiln::expect_dtype(*s, a, i, kiln::f32); !st.ok()) return st;
    if (auto st = kiln::expect_rank(*s, a, 0, 1); !st.ok()) return st;
    if (auto st = kiln::expect_shape(*s, a, 1, a.tensor(0).shape); !st.ok()) return st;
    p.dtype = kiln::f32;
    p.n_dims = 1;
    p.dims[0] = a.tensor(0).numel();
    return kiln::Status();
  };
  s->tensor_specs = [](const kiln::Problem& p, std::vector<kiln::TensorSpec>& specs) {
    specs = {{kiln::f32, kiln::Shape::vector(p.dims[0])}, {kiln::f32, kiln::Shape::vector(p.dims[0])}};
    return kiln::Status();
  };
  s->reference = [](const kiln::Args& a, const kiln::Problem& p) {
    const float f = static_cast<float>(a.scalar(0));
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = f * a.tensor(0).as<float>()[i];
    return kiln::Status();
  };
  s->work = [](const kiln::Problem& p) { return 8.0 * static_cast<double>(p.dims[0]); };
  return s;
}

class ScaleVariant final : public kiln::Variant {
 public:
  // `even_only`: supports() accepts only even n (to exercise rejection reasons).
  ScaleVariant(std::string name, int priority, bool even_only)
      : Variant({std::move(name), "scale", kiln::DeviceKind::host, {kiln::f32}, priority, "test variant"},
                kiln::ParamSpace().param("unroll", {1, 2, 4}).constraint(
                    "unroll divides n", [](const kiln::Config& c, const kiln::DeviceInfo&, const kiln::Problem& p) {
                      return p.n_dims == 0 || p.dims[0] % c.get("unroll") == 0;
                    })),
        even_only_(even_only) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"unroll", 1}}; }
  kiln::Support supports(const kiln::Problem& p, const kiln::DeviceInfo&, const kiln::Config&) const override {
    if (even_only_ && p.dims[0] % 2 != 0) return kiln::Support::no("n must be even");
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config& c, void*,
                      kiln::Stream) const override {
    const float f = static_cast<float>(a.scalar(0));
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = f * a.tensor(0).as<float>()[i];
    last_run().variant = name();
    last_run().config = c;
    ++last_run().count;
    return kiln::Status();
  }

 private:
  bool even_only_;
};

// A scale variant whose supports() throws (variant methods must not; dispatch and the tuner pass
// it over with the reason): priority 50, so it is tried first.
class ThrowingSupportsScale final : public kiln::Variant {
 public:
  ThrowingSupportsScale()
      : Variant({"scale_throws", "scale", kiln::DeviceKind::host, {kiln::f32}, /*priority=*/50, "throws"},
                kiln::ParamSpace()) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    throw std::runtime_error("supports exploded");
  }
  kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*, kiln::Stream) const override {
    return kiln::Status::fail(kiln::ErrorKind::internal, "must not run");
  }
};

// scale_even (priority 10, even n only) and scale_any (priority 5).
inline kiln::Registry scale_registry() {
  kiln::Registry r;
  r.add_op(scale_schema());
  r.add_variant(std::make_shared<ScaleVariant>("scale_even", 10, true));
  r.add_variant(std::make_shared<ScaleVariant>("scale_any", 5, false));
  return r;
}

}  // namespace kiln_test
