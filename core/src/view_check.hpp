// The checks a TensorRef filled in by hand must pass before kiln touches the memory it describes,
// shared by the functions that take one view outside op() (kiln::copy, kiln::fill_random).
// TensorRef is a plain struct, so a view may hold anything: null or wild data, an unknown dtype,
// a rank outside 1..3, negative extents, negative or overlapping strides, or extents and strides
// whose last element lies past the end of the address space.  Each of those made the loops that
// follow read or write outside the view (a segfault at best).
//
//   detail::check_view(t, "kiln::fill_random: argument 't'");   // the message starts so
//
// A non-owning view does not know the size of the allocation it points into, so an extent larger
// than the memory behind a valid pointer cannot be told from here; what can be is refused.
#pragma once
#include <cstdint>
#include <string>

#include "kiln/errors.hpp"
#include "kiln/tensor_ref.hpp"

namespace kiln::detail {

// A DType cast from an integer outside the enum (DType(42)) has size 0: a buffer of it would be
// empty and every byte-count check would pass on a view of it.  DTypeError "<what>: unknown dtype".
inline void check_dtype(DType dtype, const char* what) {
  if (dtype_size(dtype) == 0)
    throw DTypeError(std::string(what) + ": unknown dtype (" + std::to_string(static_cast<int>(dtype)) + ")");
}

struct ViewCheck {
  // The data pointer must be a multiple of the element size (element-wise stores as T).
  bool element_aligned = false;
  // Rank 0 (a default-constructed or moved-from Buffer) passes as a view of nothing.
  bool rank0_is_empty = false;
};

// Throws the matching ArgumentError subclass, "<who> <view>: <what was expected>", when `t` cannot
// be addressed as it says; returns when it can (an empty view passes with any pointer).  `who`
// names the function and the argument: "kiln::copy: the destination".
inline void check_view(const TensorRef& t, const std::string& who, ViewCheck how = {}) {
  const std::string head = who + " ";
  if (dtype_size(t.dtype) == 0)
    throw DTypeError(head + "has an unknown dtype (" + std::to_string(static_cast<int>(t.dtype)) +
                     "), expected one of f32, f64, f16, bf16, i32, u32, u8, i64");
  if (t.shape.rank == 0 && how.rank0_is_empty) return;
  if (t.shape.rank < 1 || t.shape.rank > 3)  // rank 0: an empty Buffer or a default TensorRef
    throw ShapeError(head + "must have rank 1, 2 or 3, got rank " + std::to_string(t.shape.rank));
  if (!t.shape.fits(t.dtype))
    throw ShapeError(head + "has shape " + t.shape.to_string() +
                     ", expected extents >= 0 whose byte count fits in int64");
  if (!t.device.is_host() && !t.device.is_cuda())
    throw DeviceError(head + "is on an unknown device kind (" + std::to_string(static_cast<int>(t.device.kind)) +
                      "), expected the host or a CUDA device");
  if (t.shape.rank >= 2) {
    const std::string why = t.strides_error();
    if (!why.empty()) throw ShapeError(head + t.to_string() + ": " + why);
  }
  std::int64_t span = 0;
  if (!t.span_fits(span))
    throw ShapeError(head + t.to_string() + " spans more bytes than fit in int64, expected strides within int64");
  if (span == 0) return;  // addresses nothing
  if (!t.data) throw ArgumentError(head + t.to_string() + " has a null data pointer, expected memory for its elements");
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(t.data);
  if (static_cast<std::uint64_t>(span) > UINTPTR_MAX - at)
    throw ShapeError(head + t.to_string() + " at " + std::to_string(at) + " spans " + std::to_string(span) +
                     " bytes, past the end of the address space: expected extents and strides within its allocation");
  if (how.element_aligned && at % dtype_size(t.dtype) != 0)
    throw ArgumentError(head + t.to_string() + ": data pointer " + std::to_string(at) + " is not a multiple of the " +
                        std::to_string(dtype_size(t.dtype)) + "-byte element size, expected an aligned pointer");
}

}  // namespace kiln::detail
