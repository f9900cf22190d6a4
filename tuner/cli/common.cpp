#include "common.hpp"

#include <kiln/runtime.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>

namespace kiln::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

}  // namespace

std::unique_ptr<Runtime> open_runtime(const std::string& tune_mode, bool quiet) {
  RuntimeOptions o;
  o.tune_mode = tune_mode;
  auto rt = std::make_unique<Runtime>(o);
  if (!quiet) {
    for (const PluginLoadError& e : rt->plugin_errors())
      std::cerr << "kiln: warning: plugin " << e.file << " not loaded: " << e.reason << "\n";
    // Printed when a command first reads the database (`kiln list` never does).
    rt->db().set_reporter([](const std::string& message, bool) { std::cerr << "kiln: warning: " << message << "\n"; });
  }
  return rt;
}

Device parse_device(const std::string& text) {
  if (text.empty()) return cuda_device_count() > 0 ? Device::cuda(0) : Device::host();
  if (text == "host" || text == "cpu") return Device::host();
  int ordinal = 0;
  if (text == "cuda" || text == "gpu") {
    ordinal = 0;
  } else if (text.rfind("cuda:", 0) == 0 || text.rfind("gpu:", 0) == 0) {
    const std::string num = text.substr(text.find(':') + 1);
    std::size_t used = 0;
    try {
      ordinal = std::stoi(num, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != num.size() || num.empty() || ordinal < 0)
      throw UsageError("bad device '" + text + "': expected host, cuda or cuda:N");
  } else {
    throw UsageError("bad device '" + text + "': expected host, cuda or cuda:N");
  }
  const int n = cuda_device_count();
  if (ordinal >= n)
    throw UsageError("device '" + text + "' is not available: " + std::to_string(n) + " CUDA device(s)" +
                     (n == 0 ? " (use --device host)" : ""));
  return Device::cuda(ordinal);
}

DType pick_dtype(const OpSchema& schema, const std::string& dtype) {
  if (!dtype.empty()) return parse_dtype(dtype);
  return schema.dtypes.empty() ? DType::f32 : schema.dtypes.front();
}

Problem make_problem(Runtime& rt, const std::string& op, const std::string& dtype, const std::string& shape,
                     Device device) {
  const OpSchema& schema = rt.registry().op(op);
  if (shape.empty()) {
    std::string dims;
    for (const auto& d : schema.dim_names) dims += (dims.empty() ? "" : "x") + d;
    throw UsageError(op + ": --shape is required (" + dims + ", e.g. --shape " + dims + " with numbers)");
  }
  Problem p = schema.problem_from_shape(pick_dtype(schema, dtype), shape, device);
  p.align_bytes = 16;
  return p;
}

std::string fmt(double v, int precision) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_us(double us) {
  if (!(us == us)) return "-";
  if (us >= 1e6) return fmt_fixed(us / 1e6, 3) + " s";
  if (us >= 1e4) return fmt_fixed(us / 1e3, 2) + " ms";
  return fmt_fixed(us, 2) + " us";
}

std::string fmt_throughput(double value, const std::string& unit) {
  if (value <= 0.0) return "-";
  if (value < 1.0) return fmt(value, 3) + " " + unit;
  return fmt_fixed(value, value >= 100 ? 0 : (value >= 10 ? 1 : 2)) + " " + unit;
}

std::string fmt_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt_fixed(bytes, u == 0 ? 0 : 1) + " " + units[u];
}

const std::atomic<bool>* install_interrupt_flag() {
  std::signal(SIGINT, on_sigint);
  return &g_interrupted;
}

bool interrupted() { return g_interrupted.load(); }

}  // namespace kiln::cli
