// A non-owning CUDA stream handle (the default stream when empty) and an owning one.
// Public headers stay free of CUDA headers: the handle is kept as void*.
//
//   kiln::OwnedStream s(rt.default_device());   // no stream on the host: the calls are synchronous
//   rt.op("add")({a, b, c}, s.get());
//   s.synchronize();
#pragma once
#include "kiln/device.hpp"

namespace kiln {

class Stream {
 public:
  Stream() = default;                         // the legacy default stream
  explicit Stream(void* cuda_stream) : handle_(cuda_stream) {}
  void* handle() const { return handle_; }    // a cudaStream_t
  // Waits for all work queued on the stream (no-op without CUDA).
  void synchronize() const;

 private:
  void* handle_ = nullptr;
};

class OwnedStream {
 public:
  explicit OwnedStream(Device device);        // cudaStreamCreateWithFlags(non-blocking)
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  OwnedStream(OwnedStream&& o) noexcept;
  OwnedStream& operator=(OwnedStream&& o) noexcept;
  Stream get() const { return Stream(handle_); }
  operator Stream() const { return get(); }
  void synchronize() const { get().synchronize(); }

 private:
  Device device_;
  void* handle_ = nullptr;
};

}  // namespace kiln
