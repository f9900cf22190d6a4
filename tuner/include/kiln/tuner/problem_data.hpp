// ProblemData: the tensors of one problem — fresh random inputs from a seed, the host
// reference outputs computed once, and the device tensors candidates run on.  Used by the tuner's
// validation and by every family's tests.
//
//   kiln::ProblemData data(schema, problem, kiln::Device::cuda(0), /*seed=*/42, {.pitched = true});
//   data.poison_outputs();                                   // 0xFF bytes: NaN for floats
//   variant.launch(data.device_args(), problem, config, ws, stream);
//   double err = data.error();                               // vs the host reference
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/args.hpp"
#include "kiln/buffer.hpp"
#include "kiln/op_schema.hpp"

namespace kiln {

struct ProblemDataOptions {
  // Rank-2 device tensors get padded rows (alloc_pitched) so strides differ from widths.
  bool pitched = false;
  // Compute the host reference (false when only timing).
  bool reference = true;
};

// The alignment class (see Problem::align_bytes) that ProblemData's tensors will have for this
// problem (TensorRef::alignment of the views it will pass): pitched rows count as 16-byte aligned,
// dense ones as their width allows.  The tuner and
// `kiln verify` give their problems this class, so supports() sees the buffers that will run.
int layout_alignment(const OpSchema& schema, const Problem& problem, bool pitched);

class ProblemData {
 public:
  // Throws ArgumentError/ShapeError when the schema cannot describe the problem's tensors.
  ProblemData(const OpSchema& schema, const Problem& problem, Device device, std::uint64_t seed,
              ProblemDataOptions options = {});

  // The problem with the device and the alignment class of the allocated tensors filled in.
  const Problem& problem() const { return problem_; }
  const OpSchema& schema() const { return *schema_; }
  // Arguments on the target device (inputs filled, outputs as last written).
  const Args& device_args() const { return device_args_; }
  // Host arguments holding the reference outputs.
  const Args& reference_args() const { return ref_args_; }
  // Fills every output (and in/out) tensor's bytes with 0xFF; in/out tensors then get their
  // original contents back, since the op reads them.
  void poison_outputs();
  // Copies the device outputs to the host and returns the schema's error measure against the
  // reference (infinity for NaN or unwritten elements).
  double error();
  double tolerance() const { return schema_->tolerance_for(problem_); }
  bool is_output(int tensor_index) const;

 private:
  const OpSchema* schema_;
  Problem problem_;
  Device device_;
  std::vector<TensorSpec> specs_;
  std::vector<Buffer> host_inputs_;    // one per tensor: original inputs (dense, host)
  std::vector<Buffer> host_ref_;       // one per tensor: reference results (dense, host)
  std::vector<Buffer> host_got_;       // one per tensor: scratch for device results
  std::vector<Buffer> on_device_;      // one per tensor on `device`
  Args device_args_, ref_args_, got_args_;
};

}  // namespace kiln
