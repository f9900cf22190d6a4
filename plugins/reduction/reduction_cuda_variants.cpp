#include "reduction_cuda_variants.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "reduction_launch.hpp"
#include "reduction_params.hpp"

namespace kiln::reduction {
namespace {

// args: dot {x, y, out}, reduce_sum {x, out}.
ReduceCall make_call(ReduceOp op, const Args& args, const Problem& problem, int sm_count, Stream stream) {
  ReduceCall call;
  call.op = op;
  call.dtype = problem.dtype;
  call.out_dtype = args.tensor(op == ReduceOp::dot ? 2 : 1).dtype;
  call.x = args.tensor(0).data;
  call.y = op == ReduceOp::dot ? args.tensor(1).data : nullptr;
  call.out = args.tensor(op == ReduceOp::dot ? 2 : 1).data;
  call.n = problem.dims[0];
  call.sm_count = sm_count;
  call.stream = stream.handle();
  return call;
}

std::vector<DType> dtypes_of(ReduceOp op, bool f32_only) {
  if (op == ReduceOp::dot || f32_only) return {DType::f32};
  return {DType::f32, DType::i32};
}

Status no_sm_count(const char* variant) {
  return Status::fail(ErrorKind::cuda, std::string(variant) + ": cannot query the SM count of the current device");
}

class LadderVariant final : public Variant {
 public:
  LadderVariant(ReduceOp op, Ladder ladder, int priority, const char* summary)
      : Variant(VariantDesc{ladder_variant_name(op, ladder), op_name(op), DeviceKind::cuda,
                            dtypes_of(op, ladder == Ladder::kahan), priority, summary},
                ladder_space()),
        op_(op),
        ladder_(ladder) {}

  Config default_config(const DeviceInfo& device) const override { return ladder_default(device); }

  Support supports(const Problem&, const DeviceInfo& device, const Config&) const override {
    if (device.sm_count <= 0) return Support::no("the device reports no multiprocessors");
    return Support::yes();
  }

  std::size_t workspace_bytes(const Problem& problem, const Config& config) const override {
    LadderConfig c;
    if (!ladder_config_from(config, c).ok()) return 0;  // launch() reports the bad config
    return ladder_workspace_bytes(ladder_, c, sm_count(problem.device));
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void* workspace,
                Stream stream) const override {
    LadderConfig c;
    if (Status s = ladder_config_from(config, c); !s.ok()) return s;
    const int sms = sm_count(problem.device);
    if (sms <= 0) return no_sm_count(ladder_variant_name(op_, ladder_));
    return launch_ladder(ladder_, make_call(op_, args, problem, sms, stream), c, workspace);
  }

 private:
  ReduceOp op_;
  Ladder ladder_;
};

class WarpShuffleVariant final : public Variant {
 public:
  explicit WarpShuffleVariant(ReduceOp op)
      : Variant(VariantDesc{warp_shuffle_variant_name(op), op_name(op), DeviceKind::cuda, dtypes_of(op, false), 100,
                            "16-byte loads, several per thread before use, warp-shuffle trees, last-block finish"},
                warp_shuffle_space(op)),
        op_(op) {}

  Config default_config(const DeviceInfo& device) const override { return warp_shuffle_default(device); }

  Support supports(const Problem& problem, const DeviceInfo& device, const Config& config) const override {
    if (device.sm_count <= 0) return Support::no("the device reports no multiprocessors");
    return warp_shuffle_supports(problem, config);
  }

  std::size_t workspace_bytes(const Problem& problem, const Config& config) const override {
    WarpShuffleConfig c;
    if (!warp_shuffle_config_from(config, c).ok()) return 0;  // launch() reports the bad config
    return warp_shuffle_workspace_bytes(c, sm_count(problem.device));
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void* workspace,
                Stream stream) const override {
    const char* name = warp_shuffle_variant_name(op_);
    WarpShuffleConfig c;
    if (Status s = warp_shuffle_config_from(config, c); !s.ok()) return s;
    const int sms = sm_count(problem.device);
    if (sms <= 0) return no_sm_count(name);
    const ReduceCall call = make_call(op_, args, problem, sms, stream);
    // supports() saw problem.align_bytes; recheck the actual pointers (cheap) rather than fault.
    const auto bits = reinterpret_cast<std::uintptr_t>(call.x) | reinterpret_cast<std::uintptr_t>(call.y);
    if (c.vector_width > 1 && bits % 16 != 0)
      return Status::fail(ErrorKind::unsupported,
                          std::string(name) + ": vector_width=4 needs 16-byte aligned pointers");
    return launch_warp_shuffle(call, c, workspace);
  }

 private:
  ReduceOp op_;
};

// f16 / bf16 inputs, f32 accumulation, out in f32 or the input dtype.  The 16-byte loads peel a
// misaligned head (reduction_half.cuh), so any 2-byte aligned view runs vectorised.
class HalfWarpShuffleVariant final : public Variant {
 public:
  explicit HalfWarpShuffleVariant(ReduceOp op)
      : Variant(VariantDesc{half_warp_shuffle_variant_name(op), op_name(op), DeviceKind::cuda,
                            {DType::f16, DType::bf16}, 100,
                            "f16/bf16: 8 halves per 16-byte load (misaligned head peeled), f32 accumulation, "
                            "warp-shuffle trees, last-block finish"},
                half_warp_shuffle_space(op)),
        op_(op) {}

  Config default_config(const DeviceInfo& device) const override { return half_warp_shuffle_default(device); }

  Support supports(const Problem& problem, const DeviceInfo& device, const Config& config) const override {
    if (device.sm_count <= 0) return Support::no("the device reports no multiprocessors");
    return half_warp_shuffle_supports(problem, config);
  }

  std::size_t workspace_bytes(const Problem& problem, const Config& config) const override {
    WarpShuffleConfig c;
    if (!half_warp_shuffle_config_from(config, c).ok()) return 0;  // launch() reports the bad config
    return warp_shuffle_workspace_bytes(c, sm_count(problem.device));
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void* workspace,
                Stream stream) const override {
    const char* name = half_warp_shuffle_variant_name(op_);
    WarpShuffleConfig c;
    if (Status s = half_warp_shuffle_config_from(config, c); !s.ok()) return s;
    const int sms = sm_count(problem.device);
    if (sms <= 0) return no_sm_count(name);
    const ReduceCall call = make_call(op_, args, problem, sms, stream);
    const auto bits = reinterpret_cast<std::uintptr_t>(call.x) | reinterpret_cast<std::uintptr_t>(call.y);
    if (bits % 2 != 0)
      return Status::fail(ErrorKind::unsupported, std::string(name) + ": f16 / bf16 elements must be 2-byte aligned");
    return launch_half_warp_shuffle(call, c, workspace);
  }

 private:
  ReduceOp op_;
};

}  // namespace

std::vector<std::shared_ptr<const Variant>> make_cuda_variants(ReduceOp op) {
  const bool dot = op == ReduceOp::dot;
  std::vector<std::shared_ptr<const Variant>> v;
  v.push_back(std::make_shared<WarpShuffleVariant>(op));
  v.push_back(std::make_shared<HalfWarpShuffleVariant>(op));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::last_block, 80, "single pass: block partials, __threadfence and a block counter; the last block finishes"));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::atomic, 70, "sequential-addressing block sums atomicAdd-ed into the zeroed output"));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::sequential, 60, "sequential-addressing tree in shared memory; a second launch adds the block sums"));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::two_pass, 55,
      "sequential-addressing block sums added in order by a one-thread kernel (the seed's host loop, on the device)"));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::kahan, 50,
      dot ? "compensated float-float sums (TwoSum, exact product error) and combine; last-block finish"
          : "compensated float-float sums (TwoSum) and combine; last-block finish"));
  v.push_back(std::make_shared<LadderVariant>(
      op, Ladder::interleaved, 40,
      "interleaved-pairs tree in shared memory (divergent); a second launch adds the block sums"));
  return v;
}

}  // namespace kiln::reduction
