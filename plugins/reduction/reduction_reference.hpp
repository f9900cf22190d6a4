// Host references of dot and reduce_sum (the tuner's oracle and the `<op>_host` variants), and
// the input fill the schemas use.
//
//   dot_reference(args, problem);          // args = {x, y, out} in host memory
//   reduce_sum_reference(args, problem);   // args = {x, out}
//
// f32 accumulates in double (a product of two floats is exact in double), then rounds once to
// float.  f16 / bf16 likewise (their values and products are exact in double); the float is then
// rounded to out's dtype when out is f16 / bf16 (to nearest even), as the device variants do.  i32 accumulates in uint32: the sum modulo 2^32 read as two's complement, which is what
// 32-bit integer arithmetic on the device produces in any order of addition.
#pragma once
#include <cstdint>

#include <kiln/args.hpp>
#include <kiln/errors.hpp>
#include <kiln/problem.hpp>
#include <kiln/tensor_ref.hpp>

namespace kiln::reduction {

Status dot_reference(const Args& args, const Problem& problem);
// A double sum rounded to float as the f32 accumulators of the device variants round it: to
// nearest even, past float's range to +-inf (a plain static_cast is undefined there), NaN as NaN.
float saturate_to_float(double v);
Status reduce_sum_reference(const Args& args, const Problem& problem);

// Fills an f32 host tensor with values uniform in [0, 1): multiples of 2^-24, the same on every
// platform for a given seed (no std::uniform_real_distribution, whose output is library-specific).
void fill_unit_interval(const TensorRef& host, std::uint64_t seed);
// A distinct seed per input tensor, so x and y of a dot differ.
std::uint64_t mix_seed(std::uint64_t seed, int tensor_index);

}  // namespace kiln::reduction
