// Devices: the host and each CUDA device, with the properties kernels and the tuner care about.
//
//   for (const kiln::DeviceInfo& d : kiln::enumerate_devices())
//     std::cout << d.fingerprint() << "\n";        // e.g. "NVIDIA H200|sm_90|132sm"
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kiln {

enum class DeviceKind { host, cuda };

constexpr const char* device_kind_name(DeviceKind k) { return k == DeviceKind::host ? "host" : "cuda"; }

// Identifies where memory lives or a kernel runs.  The host has ordinal -1.
struct Device {
  DeviceKind kind = DeviceKind::host;
  int ordinal = -1;

  static Device host() { return {DeviceKind::host, -1}; }
  static Device cuda(int ordinal) { return {DeviceKind::cuda, ordinal}; }
  bool is_host() const { return kind == DeviceKind::host; }
  bool is_cuda() const { return kind == DeviceKind::cuda; }
  bool operator==(const Device& o) const { return kind == o.kind && ordinal == o.ordinal; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string to_string() const;  // "host", "cuda:0"
};

// The lookup levels of the tuning database, most specific first.
enum class FallbackLevel { exact, arch_and_sms, arch, any };
const char* fallback_level_name(FallbackLevel level);

struct DeviceInfo {
  Device device;
  std::string name;                  // "NVIDIA H200"; "host" for the host
  int cc_major = 0, cc_minor = 0;    // compute capability; 0.0 on the host
  int sm_count = 0;                  // multiprocessors (host: hardware threads)
  std::size_t smem_per_block_optin = 0;  // largest shared memory a block may opt in to
  std::size_t smem_per_block = 0;        // default limit without opting in (48 KiB)
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int mem_bus_width_bits = 0;
  int mem_clock_khz = 0;
  int max_threads_per_block = 0;
  int driver_version = 0;            // CUDA driver API version, e.g. 13000
  int runtime_version = 0;           // CUDA runtime version kiln was built with

  // "sm_90", or "host".
  std::string arch() const;
  // Stable across reboots and driver updates: the product name, the architecture and the SM
  // count; e.g. "NVIDIA H200|sm_90|132sm".  Driver and runtime versions are deliberately left
  // out so that a driver update keeps the tuned entries.
  std::string fingerprint() const;
  // Peak DRAM bandwidth from bus width and clock, bytes per second (0 when unknown).
  double peak_bandwidth_bytes_per_s() const;
};

// Does `stored` (a fingerprint read from a database) match `device` at `level`?
bool fingerprint_matches(const std::string& stored, const DeviceInfo& device, FallbackLevel level);

// The host first, then every CUDA device kiln can use (none when built without CUDA or when no
// GPU is present).  Queried once and cached.
const std::vector<DeviceInfo>& enumerate_devices();
// The entry of enumerate_devices() for `device`; throws DeviceError if there is none.
const DeviceInfo& device_info(Device device);
// Multiprocessors of `device` (from the cached device_info()), 0 when there is no such device:
// what launch() code sizes grids with, without a query per launch and without throwing.
int sm_count(Device device) noexcept;
// Number of usable CUDA devices (0 without CUDA).
int cuda_device_count();

}  // namespace kiln
