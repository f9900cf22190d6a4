// Runtime: loads the plugins, opens the tuning database, and hands out ops.
//
//   kiln::Runtime rt;                          // plugins from KILN_PLUGIN_PATH or the install
//   kiln::Device dev = rt.default_device();    // CUDA device 0, else the host
//   kiln::OwnedStream stream(dev);
//   auto a = kiln::Buffer::alloc(dev, kiln::f32, {64, 32});
//   auto b = kiln::Buffer::alloc(dev, kiln::f32, {32, 16});
//   auto c = kiln::Buffer::alloc(dev, kiln::f32, {64, 16});
//   rt.op("gemm")({a, b, c}, stream);          // tuned choice, else the default
//
// Tests build a Runtime from a registry filled in code: kiln::Runtime rt(std::move(reg), opts).
//
// CUDA graphs: a memo-hit op() allocates nothing, takes no lock and never synchronises, so it can
// be captured.  Workspace (scratch memory some variants need) is kept per (device, stream) and
// allocated outside the launch: call op() (or Op::prepare) once with the same problem on the same
// stream before capturing, or reserve it with Runtime::reserve_workspace.  op() called during
// capture for a problem it has not decided yet, or that would need to allocate, throws
// DeviceError saying so instead of breaking the capture.
//
// First use: a problem without a tuned entry of its own is decided from other problems' evidence;
// under KILN_TUNE=race (the default) that first call also times the prediction against the
// runners-up on inputs of its own and blocks until it is done (docs/tuning.md, "KILN_TUNE").
//
// Pointer check: on a memo miss, and on every call when KILN_CHECK=1, each CUDA argument must be
// device memory of the device its TensorRef names, or managed memory (cudaPointerGetAttributes);
// otherwise op() throws DeviceError naming the argument, before anything is launched.
#pragma once
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/args.hpp"
#include "kiln/dispatcher.hpp"
#include "kiln/log.hpp"
#include "kiln/plugin_loader.hpp"
#include "kiln/registry.hpp"
#include "kiln/stream.hpp"
#include "kiln/tuning_db.hpp"

namespace kiln {

struct RuntimeOptions {
  bool load_plugins = true;
  std::vector<std::string> plugin_dirs;       // empty: PluginLoader::default_search_path()
  bool use_default_db_paths = true;           // shipped + user paths from the environment
  std::vector<std::string> shipped_db_paths;  // used when !use_default_db_paths
  std::string user_db_path;                   // used when !use_default_db_paths ("" = none)
  // KILN_TUNE mode: "off" | "race" | "lazy" | "record", in any case (ArgumentError for another
  // value); empty reads the environment variable (unset or empty: "race").
  std::string tune_mode;
  // kiln's log (kiln/log.hpp; one per process, so the last Runtime that sets these wins):
  // the level (ArgumentError for a value outside LogLevel), else KILN_LOG_LEVEL, else warn; and a
  // callback that receives the messages instead of standard error (empty: leave it as it is).
  std::optional<LogLevel> log_level;
  LogCallback log_callback;
};

class Runtime;

// A handle to one op; cheap to copy, usable while its Runtime lives (afterwards every member
// throws kiln::Error saying so, instead of reading freed memory).  Keep it for repeated calls:
// it remembers the decision of its last call bound to that call's argument layout, so the next
// call with the same dtypes, extents, strides, scalars and alignment class (the pointers may
// differ) skips the core's validation and the memo lookup (docs/architecture.md, "The hot path").
// One Op may be used by several threads at once.
class Op {
 public:
  Op(const Op& o) noexcept
      : rt_(o.rt_), schema_(o.schema_), alive_(o.alive_), bound_(o.bound_.load(std::memory_order_acquire)) {}
  Op& operator=(const Op& o) noexcept {
    rt_ = o.rt_;
    schema_ = o.schema_;
    alive_ = o.alive_;
    bound_.store(o.bound_.load(std::memory_order_acquire), std::memory_order_release);
    return *this;
  }
  // Validates, dispatches and launches asynchronously on `stream`.  Throws the kiln::Error
  // subclass that names what is wrong (shape, dtype, device, null pointer, no variant).
  void operator()(const Args& args, Stream stream = {}) const;
  // Validates `args` into a Problem without launching.
  Problem problem(const Args& args) const;
  // Everything op(args, stream) does except the launch: validates, checks the pointers, decides
  // (memoised) and reserves the workspace for `stream`.  Call it before capturing a CUDA graph.
  void prepare(const Args& args, Stream stream = {}) const;
  const OpSchema& schema() const { return live_schema(); }
  const std::string& name() const { return live_schema().name; }

 private:
  friend class Runtime;
  Op(Runtime* rt, const OpSchema* schema, std::weak_ptr<const void> alive)
      : rt_(rt), schema_(schema), alive_(std::move(alive)) {}
  // The schema, after checking that the Runtime (which owns it) still lives: one relaxed load.
  const OpSchema& live_schema() const {
    if (alive_.expired()) throw_runtime_gone();
    return *schema_;
  }
  [[noreturn]] static void throw_runtime_gone();
  Runtime* rt_;
  const OpSchema* schema_;
  // Expires when the Runtime is destroyed (Runtime::alive_).
  std::weak_ptr<const void> alive_;
  // The last call's bound decision (owned by the Runtime's Dispatcher); a hint: any thread may
  // replace it, a stale or mismatching one only sends the call down the full path.
  mutable std::atomic<const detail::BoundCall*> bound_{nullptr};
};

class Runtime {
 public:
  Runtime();
  explicit Runtime(RuntimeOptions options);
  Runtime(Registry registry, RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // CUDA device `i`; throws DeviceError when there is no such device.
  Device device(int i) const;
  Device host() const { return Device::host(); }
  // The CUDA device 0 when there is one, else the host.
  Device default_device() const;
  const std::vector<DeviceInfo>& devices() const;

  // Throws UnknownOpError listing the known ops (and the plugin files that failed to load).
  Op op(const std::string& name) &;
  // An Op is usable only while its Runtime lives: `Runtime().op("add")` would be dead at once.
  Op op(const std::string& name) && = delete;
  // Runs an explicit variant with an explicit config (benchmarks, tests); validates like op().
  void run_variant(const Variant& variant, const Config& config, const Args& args, Stream stream = {});
  // What op() would run for `problem`, and why (not memoised).  A Problem filled in by hand is
  // checked as op() would have made it (Dispatcher::check_problem): the matching ArgumentError
  // subclass, naming argument 'problem', for a schema not of this registry, a dim count other than
  // the op's, a bad dtype, dim or device, or align_bytes other than 1, 2, 4, 8 or 16.
  Decision explain(const Problem& problem) const;

  const Registry& registry() const { return registry_; }
  TuningDb& db() { return db_; }
  const TuningDb& db() const { return db_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  const std::vector<PluginLoadError>& plugin_errors() const { return plugin_errors_; }
  const std::vector<std::string>& loaded_plugins() const { return loaded_plugins_; }
  const std::string& tune_mode() const { return tune_mode_; }

  // Shared by Op and the tuner: validates args into a problem (core checks + schema's).
  Problem make_problem(const OpSchema& schema, const Args& args) const;
  // Scratch memory for `bytes` on `device` for work on `stream`; grows only, kept per stream
  // (a smaller one replaced by growth stays allocated until the Runtime is destroyed, so a
  // launch still holding it is safe).  Throws DeviceError for a `device` that names no device
  // here, and when it must allocate while `stream` is capturing a CUDA graph.
  void* workspace(Device device, Stream stream, std::size_t bytes);
  // Makes sure `stream` has at least `bytes` of workspace on `device` (outside capture).
  void reserve_workspace(Device device, Stream stream, std::size_t bytes) { workspace(device, stream, bytes); }
  // Whether every op() call checks its pointers (KILN_CHECK=1), not only memo misses.
  bool checks_every_call() const { return check_every_call_; }

 private:
  friend class Op;
  // op(): the bound call in `hint` when it matches (validation skipped, see Op), else
  // launch_checked(), which then binds the call's layout into `hint`.
  void launch(const OpSchema& schema, const Args& args, Stream stream, std::atomic<const detail::BoundCall*>& hint);
  // The hot path: false (nothing launched) when the schema's make_problem does not give the
  // bound problem for these args; then the full path runs and reports what is wrong.
  bool launch_bound(const OpSchema& schema, const Args& filled, const detail::BoundCall& bound, Stream stream);
  // The full path: validation, memo lookup or decision, pointer check, launch.  `args` are the
  // caller's, `filled` the same with the default scalars completed.
  void launch_checked(const OpSchema& schema, const Args& args, const Args& filled, Stream stream,
                      std::atomic<const detail::BoundCall*>& hint);
  // Launches decision `d` for problem p and throws what its Status says.
  void run_decision(const OpSchema& schema, const Decision& d, const Args& filled, const Problem& p, Stream stream);
  // run_decision's work with the launch and workspace size given (a bound call keeps copies of
  // the decision's; `d` names the variant in an error).
  void run_launch(const OpSchema& schema, const PreparedLaunch& launch, std::size_t workspace_bytes, const Decision& d,
                  const Args& filled, const Problem& p, Stream stream);
  void prepare(const OpSchema& schema, const Args& args, Stream stream);
  // The memo miss of launch(): pointer check (done by the caller), capture check, decision,
  // workspace for `stream`.
  const Decision& decide_for_launch(const Problem& p, Stream stream);
  void check_pointers(const OpSchema& schema, const Args& args, const Problem& p) const;
  // Lock-free: the workspace of (device, stream) when it holds `bytes`, else null.
  void* find_workspace(Device device, Stream stream, std::size_t bytes) const noexcept;
  // make_problem for args whose scalars are already complete.
  Problem derive_problem(const OpSchema& schema, const Args& args) const;
  void init(RuntimeOptions options);

  // Its weak copies in every Op expire with the Runtime, so a late call throws.
  std::shared_ptr<const void> alive_ = std::make_shared<const int>(0);
  Registry registry_;
  TuningDb db_;
  Dispatcher dispatcher_;
  std::vector<PluginLoadError> plugin_errors_;
  std::vector<std::string> loaded_plugins_;
  std::string tune_mode_ = "off";
  bool check_every_call_ = false;
  bool multi_device_ = false;
  // Workspaces: an immutable table of the current one per (device, stream), replaced (never
  // modified) under workspace_mutex_ and read without a lock; every table and buffer lives as
  // long as the Runtime.
  struct Workspace;
  struct WorkspaceTable;
  std::mutex workspace_mutex_;
  std::atomic<const WorkspaceTable*> workspace_table_{nullptr};
  std::deque<std::unique_ptr<Workspace>> workspaces_;
  std::deque<std::unique_ptr<WorkspaceTable>> workspace_tables_;
};

}  // namespace kiln
