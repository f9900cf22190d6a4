#include "cuda_backend.hpp"

#include <cuda_runtime.h>

#include <string>

#include "kiln/errors.hpp"

namespace kiln::detail {
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw CudaError(std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace

int cuda_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

DeviceInfo cuda_query(int ordinal) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
  DeviceInfo d;
  d.device = Device::cuda(ordinal);
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.smem_per_block = p.sharedMemPerBlock;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.global_mem_bytes = p.totalGlobalMem;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  int bus = 0, clock = 0;
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, ordinal);
  cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, ordinal);
  d.mem_bus_width_bits = bus;
  d.mem_clock_khz = clock;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

void* cuda_alloc(int ordinal, std::size_t bytes) {
  cuda_set_device(ordinal);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return p;
}

void* cuda_alloc_pitched(int ordinal, std::size_t width_bytes, std::size_t rows, std::size_t& pitch) {
  cuda_set_device(ordinal);
  void* p = nullptr;
  check(cudaMallocPitch(&p, &pitch, width_bytes == 0 ? 1 : width_bytes, rows == 0 ? 1 : rows), "cudaMallocPitch");
  return p;
}

void cuda_free(int ordinal, void* ptr) noexcept {
  if (!ptr) return;
  cudaSetDevice(ordinal);
  cudaFree(ptr);
}

void cuda_copy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width_bytes,
                  std::size_t rows) {
  if (width_bytes == 0 || rows == 0) return;
  check(cudaMemcpy2D(dst, dpitch, src, spitch, width_bytes, rows, cudaMemcpyDefault), "cudaMemcpy2D");
}

void cuda_memset(int ordinal, void* ptr, int byte, std::size_t bytes) {
  cuda_set_device(ordinal);
  check(cudaMemset(ptr, byte, bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cudaMemset");
}

void* cuda_stream_create(int ordinal) {
  cuda_set_device(ordinal);
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}

void cuda_stream_destroy(void* stream) noexcept {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

void cuda_stream_sync(void* stream) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

void cuda_set_device(int ordinal) {
  check(cudaSetDevice(ordinal), "cudaSetDevice");
}

int cuda_pointer_device(const void* ptr) noexcept {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) return attr.device;
  return -1;
}

PointerKind cuda_pointer_kind(const void* ptr, int& device) noexcept {
  device = -1;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return PointerKind::unknown;
  }
  device = attr.device;
  switch (attr.type) {
    case cudaMemoryTypeUnregistered: return PointerKind::unregistered_host;
    case cudaMemoryTypeHost: return PointerKind::registered_host;
    case cudaMemoryTypeDevice: return PointerKind::device;
    case cudaMemoryTypeManaged: return PointerKind::managed;
  }
  return PointerKind::unknown;
}

bool cuda_stream_capturing(void* stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

void* cuda_event_create() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreate(&e), "cudaEventCreate");
  return e;
}

void cuda_event_destroy(void* event) noexcept {
  if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

void cuda_event_record(void* event, void* stream) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
}

float cuda_event_elapsed_ms(void* start, void* stop) {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)), "cudaEventSynchronize");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)), "cudaEventElapsedTime");
  return ms;
}

void cuda_memset_async(void* ptr, int byte, std::size_t bytes, void* stream) {
  check(cudaMemsetAsync(ptr, byte, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
}

std::string cuda_last_error() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? std::string() : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void cuda_device_sync() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

bool cuda_device_healthy(int ordinal) noexcept {
  cudaGetLastError();  // a non-sticky launch error is cleared by reading it
  if (cudaSetDevice(ordinal) != cudaSuccess) return false;
  if (cudaDeviceSynchronize() != cudaSuccess) return false;
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace kiln::detail
