// The few CUDA runtime calls the core makes, behind plain functions so that host-only builds
// link no_cuda_backend.cpp instead (every call there throws DeviceError).
#pragma once
#include <cstddef>
#include <string>

#include "kiln/device.hpp"

namespace kiln::detail {

int cuda_count() noexcept;                       // 0 when no driver or no device
DeviceInfo cuda_query(int ordinal);
void* cuda_alloc(int ordinal, std::size_t bytes);
void* cuda_alloc_pitched(int ordinal, std::size_t width_bytes, std::size_t rows, std::size_t& pitch);
void cuda_free(int ordinal, void* ptr) noexcept;
// 2-D copy between any of host/device memory (cudaMemcpy2D with cudaMemcpyDefault).
void cuda_copy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                  std::size_t width_bytes, std::size_t rows);
void cuda_memset(int ordinal, void* ptr, int byte, std::size_t bytes);
void* cuda_stream_create(int ordinal);
void cuda_stream_destroy(void* stream) noexcept;
void cuda_stream_sync(void* stream);
void cuda_set_device(int ordinal);
// Events for timing on a stream (cudaEvent_t as void*).
void* cuda_event_create();
void cuda_event_destroy(void* event) noexcept;
void cuda_event_record(void* event, void* stream);
float cuda_event_elapsed_ms(void* start, void* stop);  // synchronises on `stop`
// Asynchronous memset on a stream, for flushing caches between timed runs.
void cuda_memset_async(void* ptr, int byte, std::size_t bytes, void* stream);
// The last launch error as a message, empty when none (clears it).
std::string cuda_last_error();
void cuda_device_sync();
// Device ordinal owning `ptr`, -1 for host or unknown memory.
int cuda_pointer_device(const void* ptr) noexcept;
// What cudaPointerGetAttributes says `ptr` is; `device` gets the owning ordinal (device memory)
// or the allocating one (managed).  The op() pointer check (runtime.cpp).
enum class PointerKind { unregistered_host, registered_host, device, managed, unknown };
PointerKind cuda_pointer_kind(const void* ptr, int& device) noexcept;
// Whether `stream` is being captured into a CUDA graph (cudaStreamIsCapturing).  A query that
// fails (the legacy stream while another stream captures in global mode) counts as capturing.
bool cuda_stream_capturing(void* stream) noexcept;
// After an error: clears a non-sticky error and synchronises `ordinal`; false when the context is
// unusable (a sticky error such as an illegal address), so nothing more can run on it.  (tuner)
bool cuda_device_healthy(int ordinal) noexcept;

}  // namespace kiln::detail
