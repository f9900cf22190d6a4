// Stand-ins for cuda_backend.cpp in builds without CUDA: there are no CUDA devices, so any call
// that needs one is a DeviceError naming the reason.
#include "cuda_backend.hpp"
#include "kiln/errors.hpp"

namespace kiln::detail {
namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw DeviceError(std::string(what) + ": kiln was built without CUDA (KILN_CUDA=OFF or no toolkit)");
}
}  // namespace

int cuda_count() noexcept { return 0; }
DeviceInfo cuda_query(int) { no_cuda("querying a CUDA device"); }
void* cuda_alloc(int, std::size_t) { no_cuda("allocating CUDA memory"); }
void* cuda_alloc_pitched(int, std::size_t, std::size_t, std::size_t&) { no_cuda("allocating CUDA memory"); }
void cuda_free(int, void*) noexcept {}
void cuda_copy_2d(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) {
  no_cuda("copying CUDA memory");
}
void cuda_memset(int, void*, int, std::size_t) { no_cuda("setting CUDA memory"); }
void* cuda_stream_create(int) { no_cuda("creating a CUDA stream"); }
void cuda_stream_destroy(void*) noexcept {}
void cuda_stream_sync(void*) {}
void cuda_set_device(int) { no_cuda("selecting a CUDA device"); }
int cuda_pointer_device(const void*) noexcept { return -1; }
PointerKind cuda_pointer_kind(const void*, int& device) noexcept {
  device = -1;
  return PointerKind::unknown;
}
bool cuda_stream_capturing(void*) noexcept { return false; }
void* cuda_event_create() { no_cuda("creating a CUDA event"); }
void cuda_event_destroy(void*) noexcept {}
void cuda_event_record(void*, void*) { no_cuda("recording a CUDA event"); }
float cuda_event_elapsed_ms(void*, void*) { no_cuda("timing CUDA events"); }
void cuda_memset_async(void*, int, std::size_t, void*) { no_cuda("setting CUDA memory"); }
std::string cuda_last_error() { return {}; }
void cuda_device_sync() {}
bool cuda_device_healthy(int) noexcept { return false; }

}  // namespace kiln::detail
