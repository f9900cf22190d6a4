#include "scale_op.hpp"

#include <cstdint>

namespace scale_example {

kiln::Status scale_reference(const kiln::Args& args, const kiln::Problem& p) {
  const float* x = args.tensor(0).as<const float>();
  float* y = args.tensor(1).as<float>();
  const float alpha = static_cast<float>(args.scalar(0));
  for (std::int64_t i = 0; i < p.dim(0); ++i) y[i] = alpha * x[i];
  return {};
}

std::shared_ptr<kiln::OpSchema> make_scale_schema() {
  auto s = std::make_shared<kiln::OpSchema>();
  s->name = "scale";
  s->summary = "y = alpha * x (f32 vectors); the out-of-tree plugin example";
  s->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  s->scalars = {{"alpha", 2.0}};
  s->dim_names = {"n"};
  s->dtypes = {kiln::f32};
  s->work_unit = kiln::WorkUnit::byte;
  // Schema functions run inside the plugin: they report problems as a Status, never throw.
  const kiln::OpSchema* self = s.get();
  s->make_problem = [self](const kiln::Args& args, kiln::Problem& p) {
    for (int i = 0; i < 2; ++i) {
      kiln::Status st = kiln::expect_dtype(*self, args, i, kiln::f32);
      if (st.ok()) st = kiln::expect_rank(*self, args, i, 1);
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
  s->reference = scale_reference;
  s->work = [](const kiln::Problem& p) { return 2.0 * sizeof(float) * static_cast<double>(p.dims[0]); };
  return s;
}

}  // namespace scale_example
