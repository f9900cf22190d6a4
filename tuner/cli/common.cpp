#include "common.hpp"

#include <kiln/op_schema.hpp>
#include <kiln/runtime.hpp>

#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <vector>

#include "spelling.hpp"

namespace kiln::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::size_t g_plugin_errors = 0;  // of the last open_runtime()

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
  g_plugin_errors = rt->plugin_errors().size();
  if (!quiet) {
    // A plugin that could not be used was logged once by the loader; not repeated here.  Database
    // messages are printed when a command first reads it (`kiln list` never does), in place of
    // the runtime's log line.
    rt->db().set_reporter([](const std::string& message, bool) { std::cerr << "kiln: warning: " << message << "\n"; });
  }
  return rt;
}

std::string skipped_plugins_note() {
  if (g_plugin_errors == 0) return {};
  return " (" + std::to_string(g_plugin_errors) +
         " plugin file(s) or directories on the plugin path were not loaded: see the errors above, or run "
         "`kiln plugins check`)";
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
    // Digits only: stoi would also take " 5" and "+5".
    if (used != num.size() || num.empty() || ordinal < 0 || !std::isdigit(static_cast<unsigned char>(num[0])))
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

std::string unknown_variant_message(const Runtime& rt, const std::string& op, const std::string& name) {
  std::string known;
  std::vector<std::string> names;
  for (const Variant* x : rt.registry().variants(op)) {
    known += (known.empty() ? "" : ", ") + x->name();
    names.push_back(x->name());
  }
  return "no variant '" + name + "' of op '" + op + "'" + detail::did_you_mean(name, names) + " (its variants: " +
         (known.empty() ? "none" : known) + ")";
}

DType pick_dtype(const OpSchema& schema, const std::string& dtype) {
  if (!dtype.empty()) return parse_dtype(dtype);
  return schema.dtypes.empty() ? DType::f32 : schema.dtypes.front();
}

Problem make_problem(Runtime& rt, const std::string& op, const std::string& dtype, const std::string& shape,
                     Device device) {
  const OpSchema& schema = rt.registry().op(op);
  if (shape.empty()) {
    // The dims in order, those with a default in brackets, and an example with numbers (the
    // message said "e.g. --shape mxnxkxtf32xbatchxtaxtbxc16 with numbers").
    std::string dims, example, optional;
    for (const auto& d : schema.dim_names) {
      dims += (dims.empty() ? "" : "x") + d;
      const auto def = schema.dim_defaults.find(d);
      if (def == schema.dim_defaults.end())
        example += (example.empty() ? "" : "x") + std::string("1000");
      else
        optional += (optional.empty() ? "" : ", ") + d + " = " + std::to_string(def->second);
    }
    throw UsageError(op + ": --shape is required: " + dims + (example.empty() ? "" : ", e.g. --shape " + example) +
                     (schema.dim_names.empty() ? std::string() : " or " + schema.dim_names.front() + "=1000,...") +
                     (optional.empty() ? "" : "; dims left out take their defaults (" + optional + ")"));
  }
  Problem p = schema.problem_from_shape(pick_dtype(schema, dtype), shape, device);
  p.align_bytes = 16;
  return p;
}

namespace {

double host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace

void check_problem_fits(const Problem& problem, bool force) {
  if (force || !problem.schema || !problem.schema->tensor_specs) return;
  std::vector<TensorSpec> specs;
  if (!problem.schema->tensor_specs(problem, specs).ok()) return;  // the evaluator reports it
  double bytes = 0.0;
  for (const TensorSpec& t : specs) bytes += static_cast<double>(t.shape.bytes(t.dtype));
  // ProblemData keeps the inputs, the reference and the result on the host, plus the tensors
  // the variants run on (on the host too for a host problem).
  const int host_copies = problem.device.is_host() ? 4 : 3;
  const std::string what = problem.schema->name + " " + problem.key() + ": its tensors take " + fmt_bytes(bytes);
  const double host = host_memory_bytes();
  if (host > 0.0 && host_copies * bytes > host)
    throw UsageError(what + "; with the " + std::to_string(host_copies) + " copies kiln keeps that is " +
                     fmt_bytes(host_copies * bytes) + " of host memory, and this machine has " + fmt_bytes(host) +
                     " (--force tries anyway)");
  if (problem.device.is_cuda()) {
    const double device = static_cast<double>(device_info(problem.device).global_mem_bytes);
    if (device > 0.0 && bytes > device)
      throw UsageError(what + ", more than the " + fmt_bytes(device) + " of " + problem.device.to_string() +
                       " (--force tries anyway)");
  }
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
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
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
