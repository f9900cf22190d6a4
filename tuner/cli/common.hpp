// What every `kiln` subcommand shares: the Command record main() dispatches on, opening the
// Runtime, parsing --device/--dtype/--shape, number formatting, exit codes and Ctrl-C.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include <kiln/device.hpp>
#include <kiln/dtype.hpp>
#include <kiln/problem.hpp>

namespace CLI {
class App;
}

namespace kiln {
class Runtime;
struct OpSchema;
}  // namespace kiln

namespace kiln::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // something was wrong: a failed check, nothing tuned, ...
inline constexpr int kExitUsage = 2;   // bad flags, unknown op, bad shape
inline constexpr int kExitInterrupted = 130;

// A mistake in the command line found after parsing (printed with the usage line, exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  CLI::App* app = nullptr;
  std::string usage;           // "usage: kiln tune <op> --shape SHAPE [...]"
  std::function<int()> run;    // exit code
};

Command make_devices_command(CLI::App& parent);
Command make_list_command(CLI::App& parent);
Command make_tune_command(CLI::App& parent);
Command make_bench_command(CLI::App& parent);
Command make_verify_command(CLI::App& parent);
Command make_explain_command(CLI::App& parent);
Command make_db_command(CLI::App& parent);
Command make_demo_command(CLI::App& parent);
Command make_plugins_command(CLI::App& parent);

// Loads the plugins and opens the tuning database.  `tune_mode` "" honours KILN_TUNE; the tools
// that measure pass "off" so that op() never tunes behind their back.  Plugin load errors are
// logged once, by the loader (KILN_LOG_LEVEL); database messages go to stderr as warnings when
// the database is first read (to the log instead with `quiet`).
std::unique_ptr<Runtime> open_runtime(const std::string& tune_mode = "off", bool quiet = false);
// "" when every plugin file and directory of the last open_runtime() loaded, else a sentence
// saying how many did not (appended to "unknown op": the op's plugin may be among them).
std::string skipped_plugins_note();

// "host", "cuda", "gpu", "cuda:N"; "" is the runtime's default device (CUDA 0, else the host).
Device parse_device(const std::string& text);
// Builds a problem from the command line; UnknownOpError / ShapeError / DTypeError name the fault.
Problem make_problem(Runtime& rt, const std::string& op, const std::string& dtype, const std::string& shape,
                     Device device);
// "no variant 'x' of op 'gemm'; did you mean 'y'? (its variants: ...)" for --variants / --vs.
std::string unknown_variant_message(const Runtime& rt, const std::string& op, const std::string& name);
// Refuses (UsageError) a problem whose tensors do not fit the memory of its device or of the host,
// counting the copies the tuner keeps (inputs, reference, result), unless `force`.  Overflowing
// sizes never get here: problem_from_shape refuses them.
void check_problem_fits(const Problem& problem, bool force);
// The op's first dtype when `dtype` is empty.
DType pick_dtype(const OpSchema& schema, const std::string& dtype);

std::string fmt(double v, int precision = 3);       // %.Ng
std::string fmt_fixed(double v, int decimals = 2);  // %.Nf
std::string fmt_us(double us);                      // "2701.30 us", "1.25 ms"
std::string fmt_throughput(double value, const std::string& unit);
std::string fmt_bytes(double bytes);                // "60.0 MiB"

// The first SIGINT sets the flag (work stops at the next candidate and the run reports what it
// finished); a second one ends the process.
const std::atomic<bool>* install_interrupt_flag();
bool interrupted();

}  // namespace kiln::cli
