// Problem: what a variant is chosen for — op, dtype, named integer extents (m, n, k, ...), the
// device, and the alignment class of the arguments.  Its key() is the tuning-database key.
//
//   const kiln::OpSchema& gemm = rt.registry().op("gemm");
//   kiln::Problem p = gemm.problem_from_shape(kiln::f32, "4096x4096x4096", kiln::Device::host());
//   p.key();                       // "f32|m=4096|n=4096|k=4096"
//   p.dim("k");                    // 4096
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"

namespace kiln {

struct OpSchema;

struct Problem {
  static constexpr int kMaxDims = 8;

  const OpSchema* schema = nullptr;  // names the dims; owned by the registry
  DType dtype = DType::f32;
  int n_dims = 0;
  std::int64_t dims[kMaxDims] = {};
  Device device;
  // Largest power of two <= 16 that divides every data pointer and row pitch in bytes; vectorised
  // variants check it.  Not part of key() (the same shape tunes the same), part of the memo key.
  int align_bytes = 16;

  std::int64_t dim(std::string_view name) const;   // throws ArgumentError for an unknown name
  std::int64_t dim(int i) const { return dims[i]; }
  std::string key() const;                          // "f32|m=4096|n=4096|k=4096"
  std::string to_string() const { return key(); }
  bool same_key(const Problem& o) const {          // dtype and dims equal (inline: op()'s hot path)
    if (dtype != o.dtype || n_dims != o.n_dims) return false;
    for (int i = 0; i < n_dims && i < kMaxDims; ++i)  // a hand-made n_dims past dims[] reads no further
      if (dims[i] != o.dims[i]) return false;
    return true;
  }
  std::size_t hash() const;                         // over schema, dtype, dims, device, alignment
  bool operator==(const Problem& o) const;
};

// Parses a key written by Problem::key() back into dtype and dims (dims in the order written).
// Returns false when the text is not such a key.
struct ParsedKey {
  DType dtype = DType::f32;
  int n_dims = 0;
  std::string names[Problem::kMaxDims];
  std::int64_t dims[Problem::kMaxDims] = {};
};
bool parse_problem_key(std::string_view key, ParsedKey& out);

// Largest power of two <= 16 dividing `value`.
int alignment_of(std::uintptr_t value);

}  // namespace kiln
