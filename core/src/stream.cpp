#include "kiln/stream.hpp"

#include <utility>

#include "cuda_backend.hpp"

namespace kiln {

void Stream::synchronize() const {
  if (detail::cuda_count() > 0) detail::cuda_stream_sync(handle_);
}

OwnedStream::OwnedStream(Device device) : device_(device) {
  if (device.is_cuda()) handle_ = detail::cuda_stream_create(device.ordinal);
}

OwnedStream::~OwnedStream() { detail::cuda_stream_destroy(handle_); }

OwnedStream::OwnedStream(OwnedStream&& o) noexcept : device_(o.device_), handle_(std::exchange(o.handle_, nullptr)) {}

OwnedStream& OwnedStream::operator=(OwnedStream&& o) noexcept {
  if (this != &o) {
    detail::cuda_stream_destroy(handle_);
    device_ = o.device_;
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

}  // namespace kiln
