#include "kiln/device.hpp"

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cuda_backend.hpp"
#include "device_form.hpp"
#include "kiln/errors.hpp"

namespace kiln {

std::string Device::to_string() const {
  if (!is_host() && !is_cuda()) return "device kind " + std::to_string(static_cast<int>(kind));  // made by hand
  return is_host() ? std::string("host") : "cuda:" + std::to_string(ordinal);
}

// Device{host, 0} and the like: without this the device comparisons of op() reported two
// different-looking devices with the same name ("is on host, but ... is on host").
std::string detail::malformed_device(Device d) {
  if (well_formed(d)) return {};
  const std::string fields = ", ordinal " + std::to_string(d.ordinal) + "}";
  if (d.kind != DeviceKind::host && d.kind != DeviceKind::cuda)
    return " has Device{kind " + std::to_string(static_cast<int>(d.kind)) + fields +
           ": expected DeviceKind::host or DeviceKind::cuda";
  if (d.is_host()) return " has Device{host" + fields + ": the host has ordinal -1 (use Device::host())";
  return " has Device{cuda" + fields + ": CUDA ordinals are >= 0";
}

const char* fallback_level_name(FallbackLevel level) {
  switch (level) {
    case FallbackLevel::exact: return "exact device";
    case FallbackLevel::arch_and_sms: return "same architecture and SM count";
    case FallbackLevel::arch: return "same architecture";
    case FallbackLevel::any: return "any device";
  }
  return "?";
}

std::string DeviceInfo::arch() const {
  if (device.is_host()) return "host";
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::string DeviceInfo::fingerprint() const {
  const char* unit = device.is_host() ? "t" : "sm";
  return name + "|" + arch() + "|" + std::to_string(sm_count) + unit;
}

double DeviceInfo::peak_bandwidth_bytes_per_s() const {
  // DDR: two transfers per clock.
  return 2.0 * mem_clock_khz * 1e3 * (mem_bus_width_bits / 8.0);
}

namespace {

std::vector<std::string> split_bar(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, '|')) parts.push_back(cur);
  return parts;
}

std::string host_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        for (char& c : name)
          if (c == '|') c = '/';
        return name;
      }
    }
  }
  return "host";
}

}  // namespace

bool fingerprint_matches(const std::string& stored, const DeviceInfo& device, FallbackLevel level) {
  if (level == FallbackLevel::exact) return stored == device.fingerprint();
  const auto parts = split_bar(stored);
  if (parts.size() != 3) return false;
  const std::string arch = device.arch();
  const bool stored_host = parts[1] == "host";
  if (stored_host != device.device.is_host()) return false;  // never cross host and GPU entries
  if (level == FallbackLevel::any) return true;
  if (parts[1] != arch) return false;
  if (level == FallbackLevel::arch) return true;
  return parts[2] == split_bar(device.fingerprint())[2];
}

const std::vector<DeviceInfo>& enumerate_devices() {
  static const std::vector<DeviceInfo> devices = [] {
    std::vector<DeviceInfo> all;
    DeviceInfo host;
    host.device = Device::host();
    host.name = host_cpu_name();
    host.sm_count = static_cast<int>(std::thread::hardware_concurrency());
    host.max_threads_per_block = 1;
    all.push_back(host);
    const int n = detail::cuda_count();
    for (int i = 0; i < n; ++i) all.push_back(detail::cuda_query(i));
    return all;
  }();
  return devices;
}

const DeviceInfo& device_info(Device device) {
  for (const DeviceInfo& d : enumerate_devices())
    if (d.device == device) return d;
  // A Device filled in by hand: say which field is off rather than "no device host".
  if (device.kind != DeviceKind::host && device.kind != DeviceKind::cuda)
    throw DeviceError("no device of kind " + std::to_string(static_cast<int>(device.kind)) +
                      ": expected DeviceKind::host or DeviceKind::cuda");
  if (device.is_host())
    throw DeviceError("no device host with ordinal " + std::to_string(device.ordinal) +
                      ": the host has ordinal -1 (use Device::host())");
  throw DeviceError("no device " + device.to_string() + ": " + std::to_string(cuda_device_count()) +
                    " CUDA device(s) available");
}

int sm_count(Device device) noexcept {
  try {
    for (const DeviceInfo& d : enumerate_devices())
      if (d.device == device) return d.sm_count;
  } catch (...) {  // the first enumeration failed: nothing is known
  }
  return 0;
}

int cuda_device_count() { return static_cast<int>(enumerate_devices().size()) - 1; }

}  // namespace kiln
