#include "histogram_schema.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "histogram_reference.hpp"

namespace kiln::histogram {
namespace {

// Exact comparison of the bins (tensor 1): the L1 distance relative to the total count, so any
// wrong or unwritten (poisoned) bin gives a positive error.
Status compare_bins(const Args& got, const Args& expected, const Problem&, double& error) {
  const TensorRef& g = got.tensor(1);
  const TensorRef& e = expected.tensor(1);
  if (g.numel() != e.numel()) return Status::fail(ErrorKind::shape, "histogram compare: bins extents differ");
  const auto* gp = g.as<const std::uint32_t>();
  const auto* ep = e.as<const std::uint32_t>();
  double diff = 0.0, total = 0.0;
  for (std::int64_t i = 0; i < e.numel(); ++i) {
    diff += gp[i] > ep[i] ? double(gp[i] - ep[i]) : double(ep[i] - gp[i]);
    total += ep[i];
  }
  error = diff / (total > 1.0 ? total : 1.0);
  return Status::success();
}

}  // namespace

std::shared_ptr<OpSchema> make_histogram_schema() {
  auto s = std::make_shared<OpSchema>();
  const OpSchema* self = s.get();
  s->name = "histogram";
  s->summary = "256-bin histogram of u8 data: bins[v] = count of v";
  s->tensors = {{"data", Role::input}, {"bins", Role::output}};
  s->dim_names = {"n"};
  s->dtypes = {u8};
  s->work_unit = WorkUnit::byte;
  s->make_problem = [self](const Args& args, Problem& p) -> Status {
    Status st = expect_dtype(*self, args, 0, u8);
    if (st.ok()) st = expect_dtype(*self, args, 1, u32);
    if (st.ok()) st = expect_rank(*self, args, 0, 1);
    if (st.ok()) st = expect_shape(*self, args, 1, Shape::vector(kByteBins));
    if (!st.ok()) return st;
    p.dtype = u8;
    p.n_dims = 1;
    p.dims[0] = args.tensor(0).numel();
    return Status::success();
  };
  s->tensor_specs = [](const Problem& p, std::vector<TensorSpec>& specs) -> Status {
    specs = {{u8, Shape::vector(p.dims[0])}, {u32, Shape::vector(kByteBins)}};
    return Status::success();
  };
  s->reference = histogram_reference;
  s->work = [](const Problem& p) { return double(p.dims[0]); };
  s->tolerance = [](const Problem&) { return 0.0; };
  s->compare = compare_bins;
  return s;
}

std::shared_ptr<OpSchema> make_histogram_range_schema() {
  auto s = std::make_shared<OpSchema>();
  const OpSchema* self = s.get();
  s->name = "histogram_range";
  s->summary = "histogram of f32 data into even bins over [lo, hi)";
  s->tensors = {{"data", Role::input}, {"bins", Role::output}};
  s->scalars = {{"lo", 0.0}, {"hi", 1.0}};
  s->dim_names = {"n", "bins"};
  // No mode dims: the bin count is a size.  It changes which configs fit in shared memory, but the
  // variants' constraints say so (a neighbour whose config does not fit is skipped), and the
  // fastest variant changes smoothly with it, so bins near a tuned count are evidence.
  s->dtypes = {f32};
  s->work_unit = WorkUnit::byte;
  s->make_problem = [self](const Args& args, Problem& p) -> Status {
    Status st = expect_dtype(*self, args, 0, f32);
    if (st.ok()) st = expect_dtype(*self, args, 1, u32);
    if (st.ok()) st = expect_rank(*self, args, 0, 1);
    if (st.ok()) st = expect_rank(*self, args, 1, 1);
    if (!st.ok()) return st;
    const std::int64_t bins = args.tensor(1).numel();
    if (bins < 1 || bins > (std::int64_t(1) << 30)) {
      return Status::fail(ErrorKind::shape, "histogram_range: bins has " + std::to_string(bins) +
                                                " elements; expected between 1 and 2^30");
    }
    RangeParams r;
    st = range_params_of(args, bins, r);
    if (!st.ok()) return st;
    p.dtype = f32;
    p.n_dims = 2;
    p.dims[0] = args.tensor(0).numel();
    p.dims[1] = bins;
    return Status::success();
  };
  s->tensor_specs = [](const Problem& p, std::vector<TensorSpec>& specs) -> Status {
    specs = {{f32, Shape::vector(p.dims[0])}, {u32, Shape::vector(p.dims[1])}};
    return Status::success();
  };
  s->reference = histogram_range_reference;
  s->work = [](const Problem& p) { return double(p.dims[0]) * sizeof(float); };
  s->tolerance = [](const Problem&) { return 0.0; };
  s->compare = compare_bins;
  // The same distributions as fill_input, drawn in place on the GPU by the tuner.
  s->input_distribution = [](const Problem&, int tensor_index) {
    return tensor_index == 0 ? InputDistribution::real(-0.1, 1.1) : InputDistribution::default_for(DType::u32);
  };
  // Uniform in [-0.1, 1.1) so that some values fall outside the default range [0, 1).
  s->fill_input = [](const Problem&, int tensor_index, const TensorRef& host, std::uint64_t seed) {
    if (tensor_index != 0) {  // the bins: overwritten by every variant
      default_fill(host, seed);
      return;
    }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-0.1f, 1.1f);
    float* x = host.as<float>();
    for (std::int64_t i = 0; i < host.numel(); ++i) x[i] = dist(rng);
  };
  return s;
}

}  // namespace kiln::histogram
