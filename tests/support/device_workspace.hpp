// Workspace for tests that call Variant::launch directly (op() reserves its own): one device
// buffer that grows to what a launch asks for.
#pragma once
#include <cstddef>
#include <cstdint>

#include <kiln/kiln.hpp>

namespace kiln_test {

class DeviceWorkspace {
 public:
  explicit DeviceWorkspace(kiln::Device device = kiln::Device::cuda(0)) : device_(device) {}
  void* get(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes > buffer_.bytes()) buffer_ = kiln::Buffer::alloc(device_, kiln::u8, {static_cast<std::int64_t>(bytes)});
    return buffer_.data();
  }
  kiln::Buffer& buffer() { return buffer_; }

 private:
  kiln::Device device_;
  kiln::Buffer buffer_;
};

}  // namespace kiln_test
