#include "kiln/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "checked_math.hpp"
#include "cuda_backend.hpp"
#include "view_check.hpp"

namespace kiln {
namespace {

constexpr std::size_t kHostAlign = 256;

std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

// A missing CUDA device, and a Device filled in by hand that names none (Device{host, 3}, a kind
// outside DeviceKind): such a buffer was allocated on the host, and every op refused it later.
void check_device(Device device, const char* what) {
  if (device == Device::host()) return;
  try {
    device_info(device);
  } catch (const DeviceError& e) {
    throw DeviceError(std::string(what) + ": argument 'device': " + e.what());
  }
}

Shape shape_from(std::initializer_list<std::int64_t> dims) {
  if (dims.size() == 1) return Shape::vector(*dims.begin());
  if (dims.size() == 2) return Shape::matrix(*dims.begin(), *(dims.begin() + 1));
  if (dims.size() == 3) return Shape::batched(*dims.begin(), *(dims.begin() + 1), *(dims.begin() + 2));
  throw ShapeError("Buffer::alloc: shape must have 1, 2 or 3 extents, got " + std::to_string(dims.size()));
}

// TensorRef is a plain struct: a view filled in field by field may hold anything.  Before any
// byte moves, the checks op() makes on its arguments (view_check.hpp): dtype, rank, extents,
// strides (none negative, no two elements at one address, except a broadcast source), span,
// pointer, and a span that stays inside the address space.
void check_copy_view(const TensorRef& t, const char* which) {
  detail::ViewCheck how;
  how.rank0_is_empty = true;  // copy() says which side is empty when the shapes differ
  detail::check_view(t, std::string("kiln::copy: the ") + which, how);
}

// Views with a batch dimension or a non-unit column stride: matrix by matrix, and element by
// element on the host; between devices only row-major matrices (one 2-D copy each).
void copy_strided(const TensorRef& dst, const TensorRef& src) {
  if (dst.shape.rank == 3 && dst.batch() > 1 && dst.batch_stride == 0)
    throw ShapeError("kiln::copy: the destination " + dst.to_string() + " has batch stride 0 (every entry at one address)");
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dst.dtype));
  if (dst.device.is_host() && src.device.is_host()) {
    for (std::int64_t b = 0; b < dst.batch(); ++b)
      for (std::int64_t r = 0; r < dst.rows(); ++r)
        for (std::int64_t c = 0; c < dst.cols(); ++c)
          std::memcpy(static_cast<char*>(dst.data) + dst.offset(b, r, c) * es,
                      static_cast<const char*>(src.data) + src.offset(b, r, c) * es, static_cast<std::size_t>(es));
    return;
  }
  if (!dst.row_major() || !src.row_major())
    throw ShapeError("kiln::copy: copies to or from a device need unit column strides, got destination " + dst.to_string() +
                     ", source " + src.to_string() + " (copy the underlying row-major storage instead)");
  for (std::int64_t b = 0; b < dst.batch(); ++b) {
    const TensorRef d = dst.matrix_at(b), s = src.matrix_at(b);
    const std::size_t width = static_cast<std::size_t>(d.cols() * es);
    const std::size_t dpitch = d.shape.rank == 2 ? static_cast<std::size_t>(d.row_stride * es) : width;
    const std::size_t spitch = s.shape.rank == 2 ? static_cast<std::size_t>(s.row_stride * es) : width;
    detail::cuda_copy_2d(d.data, dpitch, s.data, spitch, width, static_cast<std::size_t>(d.rows()));
  }
}

}  // namespace

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept : ref_(std::exchange(o.ref_, TensorRef{})), bytes_(std::exchange(o.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    ref_ = std::exchange(o.ref_, TensorRef{});
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void Buffer::release() noexcept {
  if (!ref_.data) return;
  if (ref_.device.is_cuda())
    detail::cuda_free(ref_.device.ordinal, ref_.data);
  else
    std::free(ref_.data);
  ref_.data = nullptr;
  bytes_ = 0;
}

Buffer Buffer::alloc(Device device, DType dtype, std::initializer_list<std::int64_t> shape) {
  return alloc(device, dtype, shape_from(shape));
}

Buffer Buffer::alloc(Device device, DType dtype, const Shape& shape) {
  detail::check_dtype(dtype, "Buffer::alloc");
  if (shape.rank < 1 || shape.rank > 3) throw ShapeError("Buffer::alloc: shape must have 1, 2 or 3 extents");
  if (shape.dims[0] < 0 || (shape.rank >= 2 && shape.dims[1] < 0) || (shape.rank == 3 && shape.dims[2] < 0))
    throw ShapeError("Buffer::alloc: extents must be >= 0, got " + shape.to_string());
  if (!shape.fits(dtype))
    throw ShapeError("Buffer::alloc: " + std::string(dtype_name(dtype)) + shape.to_string() +
                     " needs more bytes than fit in int64");
  check_device(device, "Buffer::alloc");
  const std::size_t bytes = static_cast<std::size_t>(shape.bytes(dtype));
  Buffer b;
  void* p = device.is_cuda() ? detail::cuda_alloc(device.ordinal, bytes)
                             : std::aligned_alloc(kHostAlign, round_up(bytes == 0 ? 1 : bytes, kHostAlign));
  if (!p) throw Error("Buffer::alloc: out of host memory for " + std::to_string(bytes) + " bytes");
  b.ref_.data = p;
  b.ref_.dtype = dtype;
  b.ref_.shape = shape;
  b.ref_.row_stride = shape.cols();
  b.ref_.batch_stride = shape.rank == 3 ? shape.rows() * shape.cols() : 0;
  b.ref_.device = device;
  b.bytes_ = bytes;
  return b;
}

Buffer Buffer::alloc_pitched(Device device, DType dtype, std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0)
    throw ShapeError("Buffer::alloc_pitched: extents must be >= 0, got " + std::to_string(rows) + "x" + std::to_string(cols));
  detail::check_dtype(dtype, "Buffer::alloc_pitched");
  const std::size_t es = dtype_size(dtype);
  std::size_t width = 0, padded = 0;
  // The padded size must fit too: pitch (up to one alignment step wider) times the rows.
  if (!Shape::matrix(rows, cols).fits(dtype) || !detail::mul_fits(static_cast<std::size_t>(cols), es, width) ||
      !detail::mul_fits(width + kHostAlign, static_cast<std::size_t>(rows == 0 ? 1 : rows), padded) ||
      padded > static_cast<std::size_t>(INT64_MAX))
    throw ShapeError("Buffer::alloc_pitched: " + std::string(dtype_name(dtype)) + "[" + std::to_string(rows) + "x" +
                     std::to_string(cols) + "] needs more bytes than fit in int64");
  check_device(device, "Buffer::alloc_pitched");
  std::size_t pitch = 0;
  void* p = nullptr;
  if (device.is_cuda()) {
    p = detail::cuda_alloc_pitched(device.ordinal, width, static_cast<std::size_t>(rows), pitch);
  } else {
    pitch = round_up(width == 0 ? 1 : width, kHostAlign);
    p = std::aligned_alloc(kHostAlign, pitch * static_cast<std::size_t>(rows == 0 ? 1 : rows));
    if (!p) throw Error("Buffer::alloc_pitched: out of host memory");
  }
  if (pitch % es != 0) {  // cannot happen with power-of-two element sizes; keep strides exact
    if (device.is_cuda()) detail::cuda_free(device.ordinal, p); else std::free(p);
    throw Error("Buffer::alloc_pitched: pitch is not a multiple of the element size");
  }
  Buffer b;
  b.ref_.data = p;
  b.ref_.dtype = dtype;
  b.ref_.shape = Shape::matrix(rows, cols);
  b.ref_.row_stride = static_cast<std::int64_t>(pitch / es);
  b.ref_.device = device;
  b.bytes_ = pitch * static_cast<std::size_t>(rows);
  return b;
}

void copy(const TensorRef& dst, const TensorRef& src) {
  if (dst.dtype != src.dtype)
    throw DTypeError("kiln::copy: dtype mismatch, destination " + std::string(dtype_name(dst.dtype)) + ", source " +
                     std::string(dtype_name(src.dtype)));
  check_copy_view(dst, "destination");
  check_copy_view(src, "source");
  if (dst.read_only)
    throw ArgumentError("kiln::copy: the destination " + dst.to_string() +
                        " is read-only (a view of const memory): make it from non-const memory");
  if (dst.numel() != src.numel() || dst.rows() != src.rows() || dst.batch() != src.batch()) {
    // Rank 0 is what a default-constructed or moved-from Buffer holds: say so, not just "[]".
    const char* empty = dst.shape.rank == 0 ? "destination" : src.shape.rank == 0 ? "source" : nullptr;
    if (empty)
      throw ShapeError(std::string("kiln::copy: the ") + empty +
                       " is an empty view (rank 0: a default-constructed or moved-from Buffer), the other is " +
                       (dst.shape.rank == 0 ? src : dst).shape.to_string());
    throw ShapeError("kiln::copy: shape mismatch, destination " + dst.shape.to_string() + ", source " + src.shape.to_string());
  }
  if (dst.numel() == 0) return;
  // memcpy and cudaMemcpy2D are undefined for overlapping memory, and an element-wise copy would
  // read what it already wrote: the same view is a no-op, any other overlap an error.
  if (same_view(dst, src)) return;
  if (views_overlap(dst, src))
    throw ArgumentError("kiln::copy: the destination " + dst.to_string() + " overlaps the source " + src.to_string() +
                        " in memory; copy through a separate buffer");
  if (dst.shape.rank == 3 || src.shape.rank == 3 || !dst.row_major() || !src.row_major()) {
    copy_strided(dst, src);
    return;
  }
  const std::size_t es = dtype_size(dst.dtype);
  const std::size_t width = static_cast<std::size_t>(dst.cols()) * es;
  const std::size_t rows = static_cast<std::size_t>(dst.rows());
  const std::size_t dpitch = dst.shape.rank == 2 ? static_cast<std::size_t>(dst.row_stride) * es : width;
  const std::size_t spitch = src.shape.rank == 2 ? static_cast<std::size_t>(src.row_stride) * es : width;
  if (dst.device.is_host() && src.device.is_host()) {
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<char*>(dst.data) + r * dpitch, static_cast<const char*>(src.data) + r * spitch, width);
    return;
  }
  detail::cuda_copy_2d(dst.data, dpitch, src.data, spitch, width, rows);
}

void Buffer::copy_from_host(const void* src, std::size_t bytes) {
  const std::size_t expected = static_cast<std::size_t>(ref_.numel()) * dtype_size(ref_.dtype);
  if (bytes != expected)
    throw ArgumentError("Buffer::copy_from_host: bytes is " + std::to_string(bytes) + ", expected " +
                        std::to_string(expected) + " (" + ref_.to_string() + ")");
  if (!src && bytes > 0) throw ArgumentError("Buffer::copy_from_host: src is a null pointer");
  TensorRef s = ref_;
  s.data = const_cast<void*>(src);
  s.row_stride = ref_.cols();
  s.col_stride = 1;
  s.batch_stride = ref_.rows() * ref_.cols();
  s.device = Device::host();
  copy(ref_, s);
}

void Buffer::copy_to_host(void* dst, std::size_t bytes) const {
  const std::size_t expected = static_cast<std::size_t>(ref_.numel()) * dtype_size(ref_.dtype);
  if (bytes != expected)
    throw ArgumentError("Buffer::copy_to_host: bytes is " + std::to_string(bytes) + ", expected " +
                        std::to_string(expected) + " (" + ref_.to_string() + ")");
  if (!dst && bytes > 0) throw ArgumentError("Buffer::copy_to_host: dst is a null pointer");
  TensorRef d = ref_;
  d.data = dst;
  d.row_stride = ref_.cols();
  d.col_stride = 1;
  d.batch_stride = ref_.rows() * ref_.cols();
  d.device = Device::host();
  copy(d, ref_);
}

namespace {
// The C++ element type of a dtype, as Buffer::to_host's messages name it.
const char* element_type_name(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "kiln::Half (or std::uint16_t for its bits)";
    case DType::bf16: return "kiln::BFloat16 (or std::uint16_t for its bits)";
    case DType::i32: return "std::int32_t";
    case DType::u32: return "std::uint32_t";
    case DType::u8: return "std::uint8_t";
    case DType::i64: return "std::int64_t";
  }
  return "?";
}
}  // namespace

void detail::check_to_host_type(DType held, ToHostAs how, DType as, std::size_t size) {
  detail::check_dtype(held, "Buffer::to_host");
  const std::string holds = "the buffer holds " + std::string(dtype_name(held)) + " elements (" +
                            std::to_string(dtype_size(held)) + " bytes each); read it as " + element_type_name(held);
  switch (how) {
    case ToHostAs::its_dtype:
      if (as != held)
        throw DTypeError("Buffer::to_host<T>: T is the element type of " + std::string(dtype_name(as)) + " but " + holds);
      return;
    case ToHostAs::half_bits:
      if (held != DType::f16 && held != DType::bf16)
        throw DTypeError("Buffer::to_host<std::uint16_t>: std::uint16_t reads the bit patterns of f16 or bf16, but " + holds);
      return;
    case ToHostAs::other_number:
      throw DTypeError("Buffer::to_host<T>: T is a " + std::to_string(size) +
                       "-byte number type that no kiln dtype has, and " + holds);
    case ToHostAs::same_size:
      if (size != dtype_size(held))
        throw DTypeError("Buffer::to_host<T>: T is a " + std::to_string(size) + "-byte type but " + holds);
      return;
  }
}

void Buffer::copy_from(const TensorRef& src) { copy(ref_, src); }

void Buffer::fill_bytes(unsigned char byte) {
  if (!ref_.data || bytes_ == 0) return;
  if (ref_.device.is_cuda())
    detail::cuda_memset(ref_.device.ordinal, ref_.data, byte, bytes_);
  else
    std::memset(ref_.data, byte, bytes_);
}

}  // namespace kiln
