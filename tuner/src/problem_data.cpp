#include "kiln/tuner/problem_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "element_value.hpp"

namespace kiln {
namespace {

// The shape of the row-major array that holds a tensor: its own, or with rows and cols swapped
// for a tensor passed as a transposed view (a column-major operand).  Buffers are allocated in
// this storage shape; comparisons run storage against storage; ops and references get view_of.
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

Buffer host_copy(const Buffer& b) {
  Buffer h = Buffer::alloc(Device::host(), b.dtype(), b.shape());
  h.copy_from(b);
  return h;
}

}  // namespace

int layout_alignment(const OpSchema& schema, const Problem& problem, bool pitched) {
  std::vector<TensorSpec> specs;
  if (!schema.tensor_specs || !schema.tensor_specs(problem, specs).ok()) return problem.align_bytes;
  // As ProblemData lays them out: storage shapes (a transposed operand's rows are its columns),
  // pitched rows only for rank 2, dense batches.
  int align = problem.align_bytes;
  for (const TensorSpec& t : specs) {
    const Shape s = storage_shape(t);
    const std::uintptr_t esize = dtype_size(t.dtype);
    if (s.rank >= 2 && s.rows() > 1 && !(pitched && s.rank == 2))
      align = std::min(align, alignment_of(static_cast<std::uintptr_t>(s.cols()) * esize));
    if (s.rank == 3 && s.batch() > 1)
      align = std::min(align, alignment_of(static_cast<std::uintptr_t>(s.rows() * s.cols()) * esize));
  }
  return align;
}

ProblemData::ProblemData(const OpSchema& schema, const Problem& problem, Device device, std::uint64_t seed,
                         ProblemDataOptions options)
    : schema_(&schema), problem_(problem), device_(device), seed_(seed) {
  schema.tensor_specs(problem, specs_).throw_if_error(schema.name + " " + problem.key());
  if (specs_.size() != schema.tensors.size())
    throw Error(schema.name + ": tensor_specs gave " + std::to_string(specs_.size()) + " tensors, the schema has " +
                std::to_string(schema.tensors.size()));
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const int index = static_cast<int>(i);
    on_device_.push_back(alloc_like(specs_[i], device, options.pitched));
    const std::uint64_t tensor_seed = seed * 1000003ull + i;
    if (schema.fill_input && !schema.input_distribution) {
      host_inputs_.push_back(Buffer::alloc(Device::host(), specs_[i].dtype, storage_shape(specs_[i])));
      schema.fill_input(problem, index, view_of(specs_[i], host_inputs_[i]), tensor_seed);
      on_device_[i].copy_from(host_inputs_[i]);
    } else {
      // Drawn in place (a kernel on a GPU), then copied down once: the host reference, the
      // oracle check and in/out restores on the host read these copies.
      const InputDistribution d = schema.input_distribution ? schema.input_distribution(problem, index)
                                                            : InputDistribution::default_for(specs_[i].dtype);
      fill_random(on_device_[i].ref(), d, tensor_seed);
      // Output-only tensors are overwritten by every run: their host copy is drawn again on the
      // host when the reference needs one (same seed, same bits), never copied down.
      if (schema.tensors[i].role == Role::output) {
        host_inputs_.emplace_back();
        redraw_.push_back({index, d, tensor_seed});
      } else {
        host_inputs_.push_back(host_copy(on_device_[i]));
      }
    }
    // In/out tensors are restored before each run from a copy on the same device.
    originals_.push_back(device.is_cuda() && schema.tensors[i].role == Role::inout ? Buffer::alloc(device, specs_[i].dtype, storage_shape(specs_[i]))
                                                                                  : Buffer());
    if (originals_[i].data()) originals_[i].copy_from(on_device_[i]);
    device_args_.push_tensor(view_of(specs_[i], on_device_[i]));
  }
  Args scalars;
  for (const ScalarRole& s : schema.scalars) scalars.push_scalar(s.default_value);
  if (schema.scalars_for) schema.scalars_for(problem, scalars);
  for (int i = 0; i < scalars.scalar_count(); ++i) device_args_.push_scalar(scalars.scalar(i));
  problem_.device = device;
  // The alignment class of the tensors just allocated, as Runtime::make_problem would find it.
  int align = 16;
  for (int i = 0; i < device_args_.tensor_count(); ++i) align = std::min(align, device_args_.tensor(i).alignment());
  problem_.align_bytes = align;
  if (options.reference) compute_reference();
}

bool ProblemData::is_output(int i) const { return schema_->tensors[i].role != Role::input; }

void ProblemData::compute_reference() {
  std::vector<Buffer> ref;
  Args args;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    ref.push_back(Buffer::alloc(Device::host(), specs_[i].dtype, storage_shape(specs_[i])));
    if (host_inputs_[i].data()) ref[i].copy_from(host_inputs_[i]);
    args.push_tensor(view_of(specs_[i], ref[i]));
  }
  for (const Redraw& r : redraw_) fill_random(ref[r.tensor].ref(), r.distribution, r.seed);
  for (int i = 0; i < device_args_.scalar_count(); ++i) args.push_scalar(device_args_.scalar(i));
  schema_->reference(args, problem_).throw_if_error(schema_->name + " host reference");
  host_ref_ = std::move(ref);
  ref_args_ = args;
  upload_expected();
  has_expected_ = true;
}

void ProblemData::upload_expected() {
  // On a GPU the default measure runs on the device: keep the expected outputs there.
  expected_.clear();
  expected_.resize(specs_.size());
  if (!device_.is_cuda() || schema_->compare) return;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (!is_output(static_cast<int>(i))) continue;
    expected_[i] = Buffer::alloc(device_, specs_[i].dtype, storage_shape(specs_[i]));
    expected_[i].copy_from(host_ref_[i]);
  }
}

const TensorRef& ProblemData::expected_output(int i) const {
  return expected_.size() > static_cast<std::size_t>(i) && expected_[i].data() ? expected_[i].ref() : host_ref_[i].ref();
}

void ProblemData::poison_outputs() {
  for (std::size_t i = 0; i < on_device_.size(); ++i) {
    if (!is_output(static_cast<int>(i))) continue;
    on_device_[i].fill_bytes(0xFF);
    if (schema_->tensors[i].role == Role::inout)
      on_device_[i].copy_from(originals_[i].data() ? originals_[i].ref() : host_inputs_[i].ref());
  }
}

double ProblemData::error() {
  if (!has_expected_) throw Error(schema_->name + ": ProblemData::error() before the expected outputs exist");
  double err = 0.0;
  if (schema_->compare) {
    const Args* got = &device_args_;
    if (!device_.is_host()) {
      if (host_got_.empty()) {
        for (const TensorSpec& s : specs_) host_got_.push_back(Buffer::alloc(Device::host(), s.dtype, storage_shape(s)));
        for (std::size_t i = 0; i < specs_.size(); ++i) got_args_.push_tensor(view_of(specs_[i], host_got_[i]));
        for (int i = 0; i < device_args_.scalar_count(); ++i) got_args_.push_scalar(device_args_.scalar(i));
      }
      for (std::size_t i = 0; i < on_device_.size(); ++i)
        if (is_output(static_cast<int>(i))) host_got_[i].copy_from(on_device_[i]);
      got = &got_args_;
    }
    Status s = schema_->compare(*got, ref_args_, problem_, err);
    if (!s.ok()) return std::numeric_limits<double>::infinity();
    return err;
  }
  // Host tensors compare in place; CUDA tensors on the device (no copies).
  for (std::size_t i = 0; i < on_device_.size(); ++i)
    if (is_output(static_cast<int>(i)))
      err = std::max(err, relative_error(on_device_[i].ref(), expected_output(static_cast<int>(i))));
  return err;
}

OracleCheck ProblemData::use_oracle(const Variant& oracle, const Config& config, void* workspace, Stream stream,
                                    int samples) {
  OracleCheck check;
  check.tolerance = 0.5 * tolerance();
  if (!schema_->reference_element) {
    check.status = Status::fail(ErrorKind::argument, schema_->name + " has no reference_element to check an oracle with");
    return check;
  }
  poison_outputs();
  Status st;
  try {
    st = oracle.launch(device_args_, problem_, config, workspace, stream);
    if (st.ok()) stream.synchronize();
  } catch (const std::exception& e) {
    st = Status::fail(ErrorKind::internal, std::string("threw: ") + e.what());
  }
  if (!st.ok()) {
    check.status = Status::fail(st.kind(), "oracle " + oracle.name() + " failed: " + st.message());
    return check;
  }
  // The oracle's outputs on the host (for the sample, and for a custom compare).
  std::vector<Buffer> outputs(specs_.size());
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (is_output(static_cast<int>(i))) outputs[i] = host_copy(on_device_[i]);
  Args inputs;
  for (std::size_t i = 0; i < specs_.size(); ++i) inputs.push_tensor(view_of(specs_[i], host_inputs_[i]));
  for (int i = 0; i < device_args_.scalar_count(); ++i) inputs.push_scalar(device_args_.scalar(i));

  // Corners, the last row and column (where edge tiles live), then uniform picks.
  std::mt19937_64 rng(seed_ ^ 0x5DEECE66Dull);
  double diff2 = 0.0, ref2 = 0.0;
  bool infinite = false;
  for (std::size_t i = 0; i < specs_.size() && !infinite; ++i) {
    if (!is_output(static_cast<int>(i))) continue;
    const std::int64_t rows = specs_[i].shape.rows(), cols = specs_[i].shape.cols();
    if (rows * cols == 0) continue;
    std::set<std::pair<std::int64_t, std::int64_t>> picks = {
        {0, 0}, {0, cols - 1}, {rows - 1, 0}, {rows - 1, cols - 1}};
    std::uniform_int_distribution<std::int64_t> any_row(0, rows - 1), any_col(0, cols - 1);
    const std::int64_t want = std::min<std::int64_t>(rows * cols, std::max(samples, 4));
    for (int j = 0; j < samples / 8 && static_cast<std::int64_t>(picks.size()) < want; ++j) {
      picks.insert({rows - 1, any_col(rng)});
      picks.insert({any_row(rng), cols - 1});
    }
    for (int guard = 0; static_cast<std::int64_t>(picks.size()) < want && guard < 4 * samples; ++guard)
      picks.insert({any_row(rng), any_col(rng)});
    const TensorRef got = outputs[i].ref();
    for (const auto& [r, c] : picks) {
      const double e = schema_->reference_element(inputs, problem_, static_cast<int>(i), r, c);
      const double g = detail::element_value(got.data, r * got.row_stride + c, static_cast<int>(got.dtype));
      ++check.samples;
      if (std::isnan(e) && std::isnan(g)) continue;
      if (std::isnan(g) || std::isnan(e) || std::isinf(g) != std::isinf(e) || (std::isinf(e) && g != e)) {
        infinite = true;
        break;
      }
      if (std::isinf(e)) continue;
      diff2 += (g - e) * (g - e);
      ref2 += e * e;
    }
  }
  check.error = infinite ? std::numeric_limits<double>::infinity()
                         : (diff2 == 0.0 ? 0.0 : (ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2)));
  if (!(check.error <= check.tolerance)) {
    check.status = Status::fail(ErrorKind::internal, "oracle " + oracle.name() + " disagrees with the reference on " +
                                                         std::to_string(check.samples) + " sampled elements: error " +
                                                         scalar_text(check.error) + " > " +
                                                         scalar_text(check.tolerance));
    return check;
  }
  // Accepted: its outputs are the expected ones.
  expected_.clear();
  expected_.resize(specs_.size());
  host_ref_.clear();
  host_ref_.resize(specs_.size());
  Args ref_args;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (is_output(static_cast<int>(i))) {
      if (schema_->compare) {
        host_ref_[i] = std::move(outputs[i]);  // compared on the host
      } else {
        expected_[i] = Buffer::alloc(device_, specs_[i].dtype, storage_shape(specs_[i]));
        expected_[i].copy_from(on_device_[i]);
        host_ref_[i] = std::move(outputs[i]);
      }
      ref_args.push_tensor(view_of(specs_[i], host_ref_[i]));
    } else {
      ref_args.push_tensor(view_of(specs_[i], host_inputs_[i]));
    }
  }
  for (int i = 0; i < device_args_.scalar_count(); ++i) ref_args.push_scalar(device_args_.scalar(i));
  ref_args_ = ref_args;
  has_expected_ = true;
  return check;
}

}  // namespace kiln
