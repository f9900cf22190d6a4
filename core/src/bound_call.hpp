// BoundCall: a memoised decision bound to one argument layout: what a repeated op() call with
// that layout reuses instead of validating its arguments again and probing the memo
// (docs/architecture.md, "The hot path").
//
// The core's validation of an op() call (derive_problem: ranks, extents, strides, spans, null
// pointers, one device, alignment class) depends only on the layout below, never on where the
// data is, so a call whose layout equals one already validated passes it and has the same
// alignment class, except the overlap check (an output sharing memory with another argument),
// which the hot path runs on every call with the spans kept here; the schema's own make_problem
// may also look at the pointers, so the hot path still runs it and checks that it gives the bound
// problem.
#pragma once
#include <cstdint>
#include <cstring>

#include "kiln/args.hpp"
#include "kiln/problem.hpp"

namespace kiln {

struct Decision;
class PreparedLaunch;

namespace detail {

// Everything of an op() call's arguments that the core's checks and the problem depend on, except
// the data pointers: per tensor the dtype, extents, strides, device and whether data is null; the
// scalars bit for bit (some ops read them into the problem: gemm's allow_tf32, topk's largest);
// and the alignment class of all data pointers together (the lowest set bit of 16 | their OR).
struct CallLayout {
  int n_tensors = 0;
  int n_scalars = 0;
  std::uintptr_t data_align = 16;
  // Each tensor's byte span (TensorRef::span_fits), for the per-call overlap check: it depends on
  // the layout alone, so a bound call need not compute it again.
  std::int64_t span_bytes[Args::kMaxTensors] = {};
  // Each tensor's element_mask() (at most 7): a call whose pointer is off its element size is not
  // this layout.
  std::uint8_t element_masks[Args::kMaxTensors] = {};
  std::uint64_t scalar_bits[Args::kMaxScalars] = {};
  TensorRef tensors[Args::kMaxTensors];  // data: null, or this layout's marker for "not null"; last,
                                         // so the few a call has are next to the fields above
};

// Whether a view's data pointer is off its element size (with elements to read): the core refuses
// such an argument (runtime.cpp), and a bound call never matches one.
inline std::uintptr_t element_mask(const TensorRef& t) {
  const std::size_t size = dtype_size(t.dtype);
  return size > 1 && t.numel() > 0 ? static_cast<std::uintptr_t>(size - 1) : 0;
}
inline bool misaligned_element(const TensorRef& t) {
  return (reinterpret_cast<std::uintptr_t>(t.data) & element_mask(t)) != 0;
}

inline std::uintptr_t data_alignment(std::uintptr_t ored_pointers) {
  const std::uintptr_t bits = ored_pointers | 16u;
  return bits & (~bits + 1);  // the lowest set bit: the largest power of two <= 16 dividing them all
}

inline std::uint64_t scalar_bits(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

inline CallLayout layout_of(const Args& args) {
  CallLayout l;
  l.n_tensors = args.tensor_count();
  l.n_scalars = args.scalar_count();
  std::uintptr_t ored = 0;
  for (int i = 0; i < l.n_tensors; ++i) {
    l.tensors[i] = args.tensor(i);
    if (!args.tensor(i).span_fits(l.span_bytes[i])) l.span_bytes[i] = 0;  // derive_problem refused it already
    ored |= reinterpret_cast<std::uintptr_t>(args.tensor(i).data);
    l.element_masks[i] = static_cast<std::uint8_t>(element_mask(args.tensor(i)));
    static char not_null;  // a marker, never dereferenced
    l.tensors[i].data = args.tensor(i).data ? &not_null : nullptr;
  }
  for (int i = 0; i < l.n_scalars; ++i) l.scalar_bits[i] = scalar_bits(args.scalar(i));
  l.data_align = data_alignment(ored);
  return l;
}

// Every field compared, also those the tensor's rank leaves unused (stricter is safe).
inline bool same_tensor_layout(const TensorRef& s, const TensorRef& t) noexcept {
  return s.dtype == t.dtype && s.read_only == t.read_only && s.shape.rank == t.shape.rank &&
         s.shape.dims[0] == t.shape.dims[0] &&
         s.shape.dims[1] == t.shape.dims[1] && s.shape.dims[2] == t.shape.dims[2] && s.row_stride == t.row_stride &&
         s.col_stride == t.col_stride && s.batch_stride == t.batch_stride && s.device == t.device &&
         (s.data == nullptr) == (t.data == nullptr);
}

inline bool same_layout(const CallLayout& l, const Args& args) noexcept {
  if (args.tensor_count() != l.n_tensors || args.scalar_count() != l.n_scalars) return false;
  std::uintptr_t ored = 0;
  for (int i = 0; i < l.n_tensors; ++i) {
    const TensorRef& t = args.tensor(i);
    if (!same_tensor_layout(l.tensors[i], t)) return false;
    if ((reinterpret_cast<std::uintptr_t>(t.data) & l.element_masks[i]) != 0) return false;
    ored |= reinterpret_cast<std::uintptr_t>(t.data);
  }
  for (int i = 0; i < l.n_scalars; ++i)
    if (scalar_bits(args.scalar(i)) != l.scalar_bits[i]) return false;
  return data_alignment(ored) == l.data_align;
}

// Immutable once published; owned by the Dispatcher's memo node of `decision`, so it lives as long
// as the Dispatcher.  `generation` is the memo generation the node was made in: clear_memo()
// starts a new one, and a bound call of an older generation is not used (the next call decides
// again from the database as it is now).
struct BoundCall {
  // The fields every call reads come first, so a call after a driver launch (which evicts the
  // host's caches) misses on few lines; prefetch() asks for all of them at once.
  std::uint64_t generation = 0;
  const Decision* decision = nullptr;
  const PreparedLaunch* launch = nullptr;  // decision->launch, copied: one line less per call
  std::size_t workspace_bytes = 0;         // decision->workspace_bytes
  Problem problem;
  CallLayout layout;

  // Starts loading the lines of this call's record that a call reads (up to the first few
  // tensors), so their misses overlap instead of following one another through the checks.
  void prefetch() const noexcept {
    const char* line = reinterpret_cast<const char*>(this);
    const char* end = reinterpret_cast<const char*>(&layout.tensors[kPrefetchTensors]);
    for (; line < end; line += 64) __builtin_prefetch(line);
  }
  static constexpr int kPrefetchTensors = 4;  // most ops take 3 or 4 tensors
};

}  // namespace detail
}  // namespace kiln
