// The two ops of the reduction family and the rungs of the reduction ladder, as plain enums the
// host code and the CUDA launchers share.
//
//   kiln::reduction::op_name(kiln::reduction::ReduceOp::sum);        // "reduce_sum"
//   kiln::reduction::ladder_name(kiln::reduction::Ladder::atomic);    // "atomic"
#pragma once

namespace kiln::reduction {

// dot: out = sum x[i] * y[i];  sum (op name "reduce_sum"): out = sum x[i].
enum class ReduceOp { dot, sum };

// The shared-memory variants, in the order the seed walks them (plus Kahan).
enum class Ladder { interleaved, sequential, two_pass, atomic, last_block, kahan };

constexpr const char* op_name(ReduceOp op) { return op == ReduceOp::dot ? "dot" : "reduce_sum"; }

constexpr const char* ladder_name(Ladder l) {
  switch (l) {
    case Ladder::interleaved: return "interleaved";
    case Ladder::sequential: return "sequential";
    case Ladder::two_pass: return "two_pass";
    case Ladder::atomic: return "atomic";
    case Ladder::last_block: return "last_block";
    case Ladder::kahan: return "kahan";
  }
  return "?";
}

// "dot_interleaved", "reduce_sum_kahan", ...: string literals, usable in launch error messages.
constexpr const char* ladder_variant_name(ReduceOp op, Ladder l) {
  const bool dot = op == ReduceOp::dot;
  switch (l) {
    case Ladder::interleaved: return dot ? "dot_interleaved" : "reduce_sum_interleaved";
    case Ladder::sequential: return dot ? "dot_sequential" : "reduce_sum_sequential";
    case Ladder::two_pass: return dot ? "dot_two_pass" : "reduce_sum_two_pass";
    case Ladder::atomic: return dot ? "dot_atomic" : "reduce_sum_atomic";
    case Ladder::last_block: return dot ? "dot_last_block" : "reduce_sum_last_block";
    case Ladder::kahan: return dot ? "dot_kahan" : "reduce_sum_kahan";
  }
  return "?";
}

constexpr const char* warp_shuffle_variant_name(ReduceOp op) {
  return op == ReduceOp::dot ? "dot_warp_shuffle" : "reduce_sum_warp_shuffle";
}

// The f16 / bf16 variant (f32 accumulation).
constexpr const char* half_warp_shuffle_variant_name(ReduceOp op) {
  return op == ReduceOp::dot ? "dot_half_warp_shuffle" : "reduce_sum_half_warp_shuffle";
}

}  // namespace kiln::reduction
