#include "devices_report.hpp"

#include "common.hpp"
#include "table.hpp"

namespace kiln::cli {
namespace {

std::string cc(const DeviceInfo& d) {
  return d.device.is_host() ? "-" : std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
}

std::string version(int v) {  // 13000 -> 13.0
  return v <= 0 ? "-" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

void print_devices(std::ostream& out, const std::vector<DeviceInfo>& devices) {
  Table t({"device", "name", "arch", "units", "L2", "memory", "peak bandwidth", "driver", "fingerprint"},
          {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::left,
           Align::left});
  for (const DeviceInfo& d : devices) {
    const bool host = d.device.is_host();
    const double bw = d.peak_bandwidth_bytes_per_s();
    t.add({d.device.to_string(), d.name, host ? "host" : d.arch() + " (cc " + cc(d) + ")",
           std::to_string(d.sm_count) + (host ? " threads" : " SMs"), host ? "-" : fmt_bytes(static_cast<double>(d.l2_bytes)),
           host ? "-" : fmt_bytes(static_cast<double>(d.global_mem_bytes)),
           bw > 0 ? fmt_fixed(bw / 1e9, 0) + " GB/s" : "-", host ? "-" : version(d.driver_version), d.fingerprint()});
  }
  t.print(out);
  if (devices.size() == 1) out << "(no CUDA device: op() runs host variants)\n";
}

Json devices_json(const std::vector<DeviceInfo>& devices) {
  Json arr = Json::array();
  for (const DeviceInfo& d : devices) {
    Json j = Json::object();
    j.set("device", d.device.to_string())
        .set("kind", device_kind_name(d.device.kind))
        .set("name", d.name)
        .set("arch", d.arch())
        .set("fingerprint", d.fingerprint())
        .set("compute_capability", cc(d))
        .set("units", d.sm_count)
        .set("l2_bytes", d.l2_bytes)
        .set("global_mem_bytes", d.global_mem_bytes)
        .set("smem_per_block_optin", d.smem_per_block_optin)
        .set("peak_bandwidth_gb_s", d.peak_bandwidth_bytes_per_s() / 1e9)
        .set("driver_version", d.driver_version)
        .set("runtime_version", d.runtime_version);
    arr.push(std::move(j));
  }
  return arr;
}

}  // namespace kiln::cli
