// InputDistribution: how one input tensor of a problem is drawn — uniform reals in [lo, hi) or
// uniform integers in [lo, hi] — by kiln's counter-based generator.  Element i of a tensor is a
// pure function of (seed, i), so the same seed gives the same bits on the host and on a GPU, and
// the tuner fills device tensors in place (no host copy of a 1 GiB input).
//
//   auto buffer = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {256, 64});
//   kiln::fill_random(buffer.ref(), kiln::InputDistribution::real(0.0, 1.0), /*seed=*/42);
//   kiln::fill_random(buffer.ref(), kiln::InputDistribution::default_for(buffer.dtype()), 7);
//
// `i` is the logical (row-major, dense) index, so a pitched device tensor and a dense host tensor
// filled with one seed hold the same values.
#pragma once
#include <cstdint>

#include "kiln/dtype.hpp"
#include "kiln/tensor_ref.hpp"

namespace kiln {

struct InputDistribution {
  enum class Kind { uniform_real, uniform_int };
  Kind kind = Kind::uniform_real;
  double lo = -1.0, hi = 1.0;  // reals: [lo, hi); integers: [lo, hi]

  static InputDistribution real(double lo, double hi) { return {Kind::uniform_real, lo, hi}; }
  static InputDistribution integer(std::int64_t lo, std::int64_t hi) {
    return {Kind::uniform_int, static_cast<double>(lo), static_cast<double>(hi)};
  }
  // kiln's default: [-1, 1) for floats, [0, 255] for u8, [0, 1000] for u32, [-1000, 1000] for
  // the signed integers.
  static InputDistribution default_for(DType dtype);
};

// Fills `t` (host or CUDA memory; rank 1 or 2, any row stride) from `d` and `seed`.  On a GPU it
// runs on the legacy default stream and returns when the tensor is filled.  Throws ArgumentError
// for a distribution whose kind does not suit the dtype (integers into a float tensor are fine;
// reals into an integer tensor are not) or an empty range, and, before anything is written, the
// matching ArgumentError subclass naming argument 't' for a view that cannot be addressed as it
// says: an unknown dtype or device kind, a rank outside 1..3, negative extents, negative or
// overlapping strides, a null pointer, a pointer not aligned to the element size, or extents and
// strides whose span overflows int64 or runs past the end of the address space.  (A view does not
// know the size of its allocation: extents larger than the memory behind a valid pointer cannot
// be detected.)
void fill_random(const TensorRef& t, const InputDistribution& d, std::uint64_t seed);

}  // namespace kiln
