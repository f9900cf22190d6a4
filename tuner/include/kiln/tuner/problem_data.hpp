// ProblemData: the tensors of one problem — fresh random inputs from a seed, the expected
// outputs, and the device tensors candidates run on.  Used by the tuner's validation and by
// every family's tests.
//
//   kiln::ProblemDataOptions pitched;
//   pitched.pitched = true;
//   kiln::ProblemData data(schema, problem, kiln::Device::cuda(0), /*seed=*/42, pitched);
//   data.poison_outputs();                                   // 0xFF bytes: NaN for floats
//   variant->launch(data.device_args(), problem, config, workspace, stream);
//   double err = data.error();                               // vs the expected outputs
//
// Inputs are drawn by kiln::fill_random from the schema's input_distribution (or the default),
// directly in the target tensors: on a GPU, a kernel fills them.  Only a schema with a custom
// fill_input (and no input_distribution) is filled on the host and copied up.
//
// Expected outputs come from one of two sources:
//   - the host reference (OpSchema::reference) on host copies of the inputs; in the constructor
//     (options.reference) or later through compute_reference(), possibly on another thread;
//   - an oracle (use_oracle): a trusted variant run on the device, itself checked against
//     OpSchema::reference_element on a sample of output elements (corners, last row and column,
//     random ones).  For large problems this replaces an O(m n k) host computation with O(k)
//     per sampled element.
// Candidates are compared with the expected outputs on the device (kiln::relative_error on CUDA
// tensors) unless the schema has its own `compare`, which runs on host copies.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/args.hpp"
#include "kiln/buffer.hpp"
#include "kiln/op_schema.hpp"
#include "kiln/stream.hpp"
#include "kiln/variant.hpp"

namespace kiln {

struct ProblemDataOptions {
  // Rank-2 device tensors get padded rows (alloc_pitched) so strides differ from widths.
  bool pitched = false;
  // Compute the host reference in the constructor (false: later, by compute_reference() or
  // use_oracle(), or never when only timing).
  bool reference = true;
};

// The alignment class (see Problem::align_bytes) that ProblemData's tensors will have for this
// problem (TensorRef::alignment of the views it will pass): pitched rows count as 16-byte aligned,
// dense ones as their width allows.  The tuner and
// `kiln verify` give their problems this class, so supports() sees the buffers that will run.
int layout_alignment(const OpSchema& schema, const Problem& problem, bool pitched);

// What the oracle check found (see ProblemData::use_oracle).
struct OracleCheck {
  Status status;              // failed: the oracle did not run, or disagreed with the sample
  std::int64_t samples = 0;   // elements recomputed on the host
  double error = 0.0;         // relative error norm over the sampled elements
  double tolerance = 0.0;     // what the sample had to meet: half the problem's tolerance
};

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
  // Host arguments holding the expected outputs (after the host reference, or after use_oracle
  // when the schema has a custom compare).
  const Args& reference_args() const { return ref_args_; }
  // Fills every output (and in/out) tensor's bytes with 0xFF; in/out tensors then get their
  // original contents back, since the op reads them.
  void poison_outputs();
  // The schema's error measure of the outputs against the expected ones (infinity for NaN or
  // unwritten elements).  Requires has_expected().
  double error();
  double tolerance() const { return schema_->tolerance_for(problem_); }
  bool is_output(int tensor_index) const;

  // Computes the host reference (and, on a GPU, uploads it for device-side comparison).  Touches
  // only host memory and the expected-output buffers, so it may run on another thread while
  // candidates run; error() must not be called until it returns.  Throws on a reference error.
  void compute_reference();
  // Runs `oracle` with `config` on the device (outputs poisoned first) and keeps its outputs as
  // the expected ones, after checking `samples` of its output elements against
  // OpSchema::reference_element in double: their relative error norm must be within half the
  // problem's tolerance.  On failure nothing changes (use the host reference instead).
  OracleCheck use_oracle(const Variant& oracle, const Config& config, void* workspace, Stream stream, int samples);
  bool has_expected() const { return has_expected_; }

 private:
  void upload_expected();
  const TensorRef& expected_output(int tensor_index) const;

  const OpSchema* schema_;
  Problem problem_;
  Device device_;
  std::uint64_t seed_;
  std::vector<TensorSpec> specs_;
  struct Redraw {  // an output-only tensor's initial contents, drawn again on the host
    int tensor;
    InputDistribution distribution;
    std::uint64_t seed;
  };
  std::vector<Buffer> host_inputs_;    // one per tensor: original contents (dense, host; empty
                                       // for output-only tensors listed in redraw_)
  std::vector<Redraw> redraw_;
  std::vector<Buffer> host_ref_;       // one per tensor: expected results (dense, host)
  std::vector<Buffer> host_got_;       // scratch for device results (custom compare), lazily
  std::vector<Buffer> on_device_;      // one per tensor on `device`
  std::vector<Buffer> originals_;      // in/out tensors' original contents on `device` (restore)
  std::vector<Buffer> expected_;       // expected outputs on `device` (device-side compare)
  Args device_args_, ref_args_, got_args_;
  bool has_expected_ = false;
};

}  // namespace kiln
