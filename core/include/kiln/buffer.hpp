// Buffer: owning, move-only memory on the host or a CUDA device.
//
//   auto a = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::f32, {m, k});
//   auto p = kiln::Buffer::alloc_pitched(kiln::Device::cuda(0), kiln::f32, rows, cols);
//   p.ref().row_stride;            // pitch / sizeof(float): rows padded for coalesced access
//   a.copy_from_host(host_vec.data(), host_vec.size() * sizeof(float));
//   std::vector<float> back = a.to_host<float>();
//   rt.op("add")({a, b, c}, s);   // a Buffer converts to the TensorRef view of itself
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kiln/errors.hpp"
#include "kiln/tensor_ref.hpp"

namespace kiln {

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
  static Buffer alloc(Device device, DType dtype, const Shape& shape);
  // 2-D allocation whose rows start on aligned addresses (cudaMallocPitch on CUDA, 256-byte rows
  // on the host); the row stride of ref() is the pitch in elements.
  static Buffer alloc_pitched(Device device, DType dtype, std::int64_t rows, std::int64_t cols);

  const TensorRef& ref() const { return ref_; }
  operator TensorRef() const { return ref_; }
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

  template <class T> std::vector<T> to_host() const {
    if (sizeof(T) != dtype_size(ref_.dtype)) throw DTypeError("Buffer::to_host: element size does not match the buffer dtype");
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
// Synchronous.
void copy(const TensorRef& dst, const TensorRef& src);

}  // namespace kiln
