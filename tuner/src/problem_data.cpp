#include "kiln/tuner/problem_data.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace kiln {
namespace {

// The shape of the row-major array that holds a tensor: its own, or with rows and cols swapped
// for a tensor passed as a transposed view.
Shape storage_shape(const TensorSpec& spec) {
  Shape s = spec.shape;
  if (spec.transposed && s.rank >= 2) std::swap(s.dims[s.rank - 2], s.dims[s.rank - 1]);
  return s;
}

Buffer alloc_like(const TensorSpec& spec, Device device, bool pitched) {
  const Shape s = storage_shape(spec);
  if (pitched && s.rank == 2) return Buffer::alloc_pitched(device, spec.dtype, s.dims[0], s.dims[1]);
  return Buffer::alloc(device, spec.dtype, s);
}

// The view an op receives of a buffer allocated by alloc_like.
TensorRef view_of(const TensorSpec& spec, const Buffer& b) { return spec.transposed ? b.ref().transposed() : b.ref(); }

}  // namespace

int layout_alignment(const OpSchema& schema, const Problem& problem, bool pitched) {
  std::vector<TensorSpec> specs;
  if (!schema.tensor_specs || !schema.tensor_specs(problem, specs).ok()) return problem.align_bytes;
  int align = problem.align_bytes;
  for (const TensorSpec& t : specs) {
    // The view ProblemData will pass, on a 256-byte aligned base: dense rows, or pitched ones
    // (alloc_pitched rows are 16-byte aligned, whatever their width).
    const Shape s = storage_shape(t);
    TensorRef v;
    v.data = reinterpret_cast<void*>(std::uintptr_t{256});
    v.dtype = t.dtype;
    v.shape = s;
    const bool padded = pitched && s.rank == 2;
    const std::int64_t per16 = 16 / static_cast<std::int64_t>(std::min<std::size_t>(16, dtype_size(t.dtype)));
    v.row_stride = padded ? (s.cols() + per16 - 1) / per16 * per16 : s.cols();
    v.batch_stride = s.rows() * s.cols();
    align = std::min(align, (t.transposed ? v.transposed() : v).alignment());
  }
  return align;
}

ProblemData::ProblemData(const OpSchema& schema, const Problem& problem, Device device, std::uint64_t seed,
                         ProblemDataOptions options)
    : schema_(&schema), problem_(problem), device_(device) {
  schema.tensor_specs(problem, specs_).throw_if_error(schema.name + " " + problem.key());
  if (specs_.size() != schema.tensors.size())
    throw Error(schema.name + ": tensor_specs gave " + std::to_string(specs_.size()) + " tensors, the schema has " +
                std::to_string(schema.tensors.size()));
  Args host_args;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const TensorSpec& spec = specs_[i];
    host_inputs_.push_back(Buffer::alloc(Device::host(), spec.dtype, storage_shape(spec)));
    host_ref_.push_back(Buffer::alloc(Device::host(), spec.dtype, storage_shape(spec)));
    host_got_.push_back(Buffer::alloc(Device::host(), spec.dtype, storage_shape(spec)));
    on_device_.push_back(alloc_like(spec, device, options.pitched));
    const std::uint64_t tensor_seed = seed * 1000003ull + i;
    if (schema.fill_input)
      schema.fill_input(problem, static_cast<int>(i), view_of(spec, host_inputs_[i]), tensor_seed);
    else
      default_fill(view_of(spec, host_inputs_[i]), tensor_seed);
    host_ref_[i].copy_from(host_inputs_[i]);
    on_device_[i].copy_from(host_inputs_[i]);
    device_args_.push_tensor(view_of(spec, on_device_[i]));
    ref_args_.push_tensor(view_of(spec, host_ref_[i]));
    got_args_.push_tensor(view_of(spec, host_got_[i]));
  }
  Args scalars;
  for (const ScalarRole& s : schema.scalars) scalars.push_scalar(s.default_value);
  if (schema.scalars_for) schema.scalars_for(problem, scalars);
  for (int i = 0; i < scalars.scalar_count(); ++i) {
    device_args_.push_scalar(scalars.scalar(i));
    ref_args_.push_scalar(scalars.scalar(i));
    got_args_.push_scalar(scalars.scalar(i));
  }
  problem_.device = device;
  // The alignment class of the tensors just allocated, as Runtime::make_problem would find it.
  int align = 16;
  for (int i = 0; i < device_args_.tensor_count(); ++i) align = std::min(align, device_args_.tensor(i).alignment());
  problem_.align_bytes = align;
  if (options.reference) schema.reference(ref_args_, problem_).throw_if_error(schema.name + " host reference");
}

bool ProblemData::is_output(int i) const { return schema_->tensors[i].role != Role::input; }

void ProblemData::poison_outputs() {
  for (std::size_t i = 0; i < on_device_.size(); ++i) {
    if (!is_output(static_cast<int>(i))) continue;
    on_device_[i].fill_bytes(0xFF);
    if (schema_->tensors[i].role == Role::inout) on_device_[i].copy_from(host_inputs_[i]);
  }
}

double ProblemData::error() {
  for (std::size_t i = 0; i < on_device_.size(); ++i)
    if (is_output(static_cast<int>(i))) host_got_[i].copy_from(on_device_[i]);
  double err = 0.0;
  if (schema_->compare) {
    Status s = schema_->compare(got_args_, ref_args_, problem_, err);
    if (!s.ok()) return std::numeric_limits<double>::infinity();
    return err;
  }
  for (std::size_t i = 0; i < on_device_.size(); ++i)
    if (is_output(static_cast<int>(i))) err = std::max(err, relative_error(host_got_[i].ref(), host_ref_[i].ref()));
  return err;
}

}  // namespace kiln
