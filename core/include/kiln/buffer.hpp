// Buffer: owning, move-only memory on the host or a CUDA device.
//
//   kiln::Device dev = kiln::Device::host();       // or kiln::Device::cuda(0)
//   std::size_t m = 64, k = 32;
//   auto a = kiln::Buffer::alloc(dev, kiln::f32, {m, k});
//   auto p = kiln::Buffer::alloc_pitched(dev, kiln::f32, m, k);
//   std::int64_t ld = p.ref().row_stride;          // pitch / sizeof(float): rows padded for coalesced access
//   std::vector<float> host_vec(m * k, 1.0f);
//   a.copy_from_host(host_vec.data(), host_vec.size() * sizeof(float));
//   p.copy_from(a);                                // any two views of one dtype and shape
//   std::vector<float> back = p.to_host<float>();  // rows packed, the padding left out
//   kiln::TensorRef view = a;                      // a Buffer converts to the view of itself
//                                                  // (a named one: a temporary's would dangle)
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/errors.hpp"
#include "kiln/tensor_ref.hpp"
#include "kiln/view.hpp"

namespace kiln {

namespace detail {
template <class T, class = void> struct has_dtype : std::false_type {};
template <class T> struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};
template <class T> inline constexpr bool has_dtype_v = has_dtype<std::remove_cv_t<T>>::value;
// What Buffer::to_host<T> reads: T of dtype `as`; std::uint16_t, the bits of f16 or bf16; a number
// type kiln has no dtype for (std::int16_t, char: refused); any other type, taken for an element
// of its size.  DTypeError, naming both, unless `held` can be read so.
enum class ToHostAs { its_dtype, half_bits, other_number, same_size };
void check_to_host_type(DType held, ToHostAs how, DType as, std::size_t size);
}  // namespace detail

class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;

  // Dense allocation; `shape` has one, two or three ({batch, rows, cols}) extents.  Memory is
  // left uninitialised.
  static Buffer alloc(Device device, DType dtype, std::initializer_list<std::int64_t> shape);
  // The same for extents of one other integer type, e.g. std::size_t ({m, k} with size_t m, k
  // would otherwise be a narrowing error); ShapeError for an extent past int64.
  template <class I, class = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, std::int64_t>>>
  static Buffer alloc(Device device, DType dtype, std::initializer_list<I> shape) {
    if (shape.size() < 1 || shape.size() > 3)
      throw ShapeError("Buffer::alloc: shape must have 1, 2 or 3 extents, got " + std::to_string(shape.size()));
    std::int64_t e[3] = {0, 0, 0};
    int i = 0;
    for (I extent : shape) {
      if (std::is_unsigned_v<I> && static_cast<std::uint64_t>(extent) > static_cast<std::uint64_t>(INT64_MAX))
        throw ShapeError("Buffer::alloc: extent " + std::to_string(extent) + " does not fit in int64");
      e[i++] = static_cast<std::int64_t>(extent);  // a negative one: alloc(Shape) names it
    }
    return alloc(device, dtype, i == 1 ? Shape::vector(e[0]) : i == 2 ? Shape::matrix(e[0], e[1]) : Shape::batched(e[0], e[1], e[2]));
  }
  static Buffer alloc(Device device, DType dtype, const Shape& shape);
  // 2-D allocation whose rows start on aligned addresses (cudaMallocPitch on CUDA, 256-byte rows
  // on the host); the row stride of ref() is the pitch in elements.
  static Buffer alloc_pitched(Device device, DType dtype, std::int64_t rows, std::int64_t cols);

  const TensorRef& ref() const& { return ref_; }
  operator TensorRef() const& { return ref_; }
  // A temporary Buffer frees its memory at the end of the statement, so a view of it would
  // dangle (`kiln::TensorRef v = kiln::Buffer::alloc(...)`): name the Buffer first.
  const TensorRef& ref() const&& = delete;
  operator TensorRef() const&& = delete;
  void* data() const { return ref_.data; }
  Device device() const { return ref_.device; }
  DType dtype() const { return ref_.dtype; }
  const Shape& shape() const { return ref_.shape; }
  std::int64_t row_stride() const { return ref_.row_stride; }
  std::size_t pitch_bytes() const { return static_cast<std::size_t>(ref_.row_stride) * dtype_size(ref_.dtype); }
  std::size_t bytes() const { return bytes_; }  // allocated bytes, padding included

  // Copies dense row-major host data (numel elements, rows packed) into this buffer, honouring the
  // row stride.  Throws ArgumentError when `bytes` is not numel * dtype size.  Synchronous.
  void copy_from_host(const void* src, std::size_t bytes);
  // Copies this buffer's elements, rows packed, into dense host memory.  Synchronous.
  void copy_to_host(void* dst, std::size_t bytes) const;
  // Copies elements from another view of the same dtype and shape (any devices, any strides).
  void copy_from(const TensorRef& src);
  // Fills every byte of the allocation with `byte` (used to poison outputs in tests and tuning).
  void fill_bytes(unsigned char byte);

  // This buffer's elements as T, rows packed.  T is the element type of the buffer's dtype (float
  // for f32, kiln::Half for f16, std::int32_t for i32: kiln::dtype_of), or std::uint16_t for the
  // bit patterns of f16 and bf16; another dtype, or a number type kiln has no dtype for
  // (std::int16_t), throws DTypeError naming both (an i32 buffer read as float was reinterpreted
  // without a word).  A class kiln has no dtype for (CUDA's __half) is taken for an element of its
  // size.  Synchronous.
  template <class T> std::vector<T> to_host() const {
    static_assert(std::is_trivially_copyable_v<T>, "Buffer::to_host<T>: T must be trivially copyable");
    using detail::ToHostAs;
    if constexpr (detail::has_dtype_v<T>)
      detail::check_to_host_type(ref_.dtype, ToHostAs::its_dtype, dtype_of_v<T>, sizeof(T));
    else
      detail::check_to_host_type(ref_.dtype,
                                 std::is_same_v<T, std::uint16_t> ? ToHostAs::half_bits
                                 : std::is_arithmetic_v<T>        ? ToHostAs::other_number
                                                                  : ToHostAs::same_size,
                                 ref_.dtype, sizeof(T));
    std::vector<T> out(static_cast<std::size_t>(ref_.numel()));
    copy_to_host(out.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  TensorRef ref_;
  std::size_t bytes_ = 0;
  void release() noexcept;
};

// Copies between any two views of the same dtype and shape, honouring both views' strides
// (cudaMemcpy2D per matrix).  On the host any strides work; a copy to or from a device needs unit
// column strides on both sides (a transposed view is copied through its row-major storage).
// A view no factory would make (null data, negative or overlapping strides, a bad rank or dtype)
// throws the matching ArgumentError subclass before anything is copied, and so does a destination
// that shares memory with the source (the very same view copies nothing).  Synchronous.
void copy(const TensorRef& dst, const TensorRef& src);

}  // namespace kiln
