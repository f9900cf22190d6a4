#include "kiln/stream.hpp"

#include <string>
#include <utility>

#include "cuda_backend.hpp"
#include "kiln/device.hpp"
#include "kiln/errors.hpp"

namespace kiln {

void Stream::synchronize() const {
  if (detail::cuda_count() > 0) detail::cuda_stream_sync(handle_);
}

OwnedStream::OwnedStream(Device device) : device_(device) {
  // A Device made by hand that names no device (Device{host, 3}, a kind outside DeviceKind) gave
  // a stream that silently meant the host.
  if (device != Device::host() && !device.is_cuda()) {
    try {
      device_info(device);
    } catch (const DeviceError& e) {
      throw DeviceError(std::string("OwnedStream: argument 'device': ") + e.what());
    }
  }
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
