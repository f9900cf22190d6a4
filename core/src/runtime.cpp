#include "kiln/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "bound_call.hpp"
#include "byte_ranges.hpp"
#include "cuda_backend.hpp"
#include "device_form.hpp"
#include "kiln/buffer.hpp"
#include "logger.hpp"
#include "spelling.hpp"
#include "tune_modes.hpp"
#include "tuning_db_files.hpp"

namespace kiln {

struct Runtime::Workspace {
  int ordinal = -1;
  void* stream = nullptr;
  Buffer buffer;
};

struct Runtime::WorkspaceTable {
  std::vector<const Workspace*> current;  // one per (device, stream): the largest
};

namespace {

int ordinal_of(Device d) { return d.is_cuda() ? d.ordinal : -1; }

// Errors of derive_problem: the message is built only when something is wrong.
[[noreturn]] void bad_argument(const OpSchema& schema, int i, ErrorKind kind, const std::string& what) {
  const std::string role = schema.name + ": argument '" + schema.tensors[i].name + "'";
  switch (kind) {
    case ErrorKind::shape: throw ShapeError(role + what);
    case ErrorKind::device: throw DeviceError(role + what);
    case ErrorKind::dtype: throw DTypeError(role + what);
    default: throw ArgumentError(role + what);
  }
}

std::string misaligned_what(const TensorRef& t) {
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", t.data);
  return std::string(" has data pointer ") + addr + ", not a multiple of " + std::to_string(dtype_size(t.dtype)) +
         " bytes: " + std::string(dtype_name(t.dtype)) + " elements must be aligned to their size";
}

Args with_default_scalars(const OpSchema& schema, const Args& args) {
  Args filled = args;
  for (int i = args.scalar_count(); i < static_cast<int>(schema.scalars.size()); ++i)
    filled.push_scalar(schema.scalars[i].default_value);
  return filled;
}

// The first pair (i, j) of an output (or inout) tensor and another tensor whose memory overlaps
// without being the very same view: a kernel that writes one while it reads the other would read
// elements already written.  The very same view (add's documented in place c == a) is left to the
// op's schema, which refuses it where the op cannot run in place (gemm, gemv, transpose, topk,
// reduce_sum, dot): make_problem runs on the bound path too.  Every
// op() call runs this (the pointers change from call to call) on byte spans computed once per
// layout (`spans`: derive_problem's, or the bound call's); it allocates nothing.  All tensors are
// on one device (derive_problem checked it; a bound layout includes the devices).
bool first_overlap(const OpSchema& schema, const Args& args, const std::int64_t* spans, int& out_i, int& other_j) {
  const int n = std::min<int>(args.tensor_count(), static_cast<int>(schema.tensors.size()));
  for (int i = 0; i < n; ++i) {
    if (schema.tensors[i].role == Role::input) continue;
    const TensorRef& out = args.tensor(i);
    for (int j = 0; j < n; ++j) {
      const bool j_writes = schema.tensors[j].role != Role::input;
      if (j == i || (j_writes && j < i)) continue;  // a pair of outputs once
      const TensorRef& other = args.tensor(j);
      if (!detail::byte_ranges_overlap(out.data, spans[i], other.data, spans[j])) continue;
      if (!j_writes && same_view(out, other)) continue;
      out_i = i;
      other_j = j;
      return true;
    }
  }
  return false;
}

[[noreturn]] void overlap_error(const OpSchema& schema, int i, int j) {
  bad_argument(schema, i, ErrorKind::argument,
               " overlaps argument '" + schema.tensors[j].name +
                   "' in memory: an output may share memory with an input only as the very same view "
                   "(data, dtype, shape and strides), where the op allows it in place");
}

}  // namespace

Runtime::Runtime() : Runtime(RuntimeOptions{}) {}

Runtime::Runtime(RuntimeOptions options) : dispatcher_(registry_, db_) { init(std::move(options)); }

Runtime::Runtime(Registry registry, RuntimeOptions options)
    : registry_(std::move(registry)), dispatcher_(registry_, db_) {
  init(std::move(options));
}

Runtime::~Runtime() = default;

void Runtime::init(RuntimeOptions options) {
  if (options.log_level) {
    const LogLevel level = *options.log_level;
    if (!is_log_level(level))
      throw ArgumentError("RuntimeOptions::log_level = " + std::to_string(static_cast<int>(level)) +
                          ": expected one of LogLevel::trace, debug, info, warn, error, critical, off");
    set_log_level(level);
  }
  if (options.log_callback) set_log_callback(std::move(options.log_callback));
  auto log = logger();
  if (options.load_plugins) {
    PluginLoader loader;
    const auto dirs = options.plugin_dirs.empty() ? PluginLoader::default_search_path() : options.plugin_dirs;
    loader.load_dirs(dirs, registry_);
    plugin_errors_ = loader.errors();
    loaded_plugins_ = loader.loaded();
  }
  for (const std::string& orphan : registry_.orphan_variants()) log->warn("variant {} is unusable", orphan);
  if (options.use_default_db_paths)
    db_ = TuningDb(TuningDb::default_shipped_paths(), TuningDb::default_user_path());
  else
    db_ = TuningDb(options.shipped_db_paths, options.user_db_path);
  // The files are read on first use (a dispatch or a db command), not here; report then.
  db_.set_reporter([log](const std::string& message, bool is_error) {
    if (is_error) log->error("{} (that file is skipped)", message);
    else log->warn("{}", message);
  });

  // Either source is read in any case.  A typo in the program's own option is its error, named as
  // the option (it said "KILN_TUNE='eager'" to programs that never set KILN_TUNE); one in the
  // environment warns and tunes nothing rather than abort the program.
  const char* env = options.tune_mode.empty() ? std::getenv("KILN_TUNE") : nullptr;
  const bool default_mode = options.tune_mode.empty() && !(env && *env);  // race, unasked: no warning if the tuner is missing
  std::string mode = !options.tune_mode.empty() ? options.tune_mode : default_mode ? "race" : env;
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto& modes = detail::tune_mode_names();
  if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
    if (!options.tune_mode.empty())
      throw ArgumentError("RuntimeOptions::tune_mode = '" + detail::printable(options.tune_mode) +
                          "': expected off, race, lazy or record (empty: KILN_TUNE)");
    log->warn("KILN_TUNE='{}' is not a tuning mode{} (expected off, race, lazy or record); op() will not tune",
              detail::printable(env), detail::did_you_mean(mode, modes));
    mode = "off";
  }
  tune_mode_ = detail::install_tune_mode(*this, mode, default_mode) ? mode : "off";
  const char* check = std::getenv("KILN_CHECK");
  check_every_call_ = check && std::string(check) == "1";
  if (check && *check && !check_every_call_ && std::string(check) != "0")  // "yes", "true": say so
    log->warn("KILN_CHECK='{}' is not 0 or 1; op() checks pointers on a call's first dispatch only",
              detail::printable(check));
  multi_device_ = cuda_device_count() > 1;
}

Device Runtime::device(int i) const {
  const int n = cuda_device_count();
  if (i < 0 || i >= n)
    throw DeviceError("Runtime::device(" + std::to_string(i) + "): " + std::to_string(n) +
                      " CUDA device(s) available" + (n == 0 ? " (use host() for the host backend)" : ""));
  return Device::cuda(i);
}

Device Runtime::default_device() const { return cuda_device_count() > 0 ? Device::cuda(0) : Device::host(); }

const std::vector<DeviceInfo>& Runtime::devices() const { return enumerate_devices(); }

Op Runtime::op(const std::string& name) & {
  try {
    return Op(this, &registry_.op(name), alive_);
  } catch (const UnknownOpError& e) {
    if (plugin_errors_.empty()) throw;
    // The op may live in a plugin that did not load: say which did not and why.
    std::string why = std::string(e.what()) + "; " + std::to_string(plugin_errors_.size()) +
                      " plugin file(s) failed to load (Runtime::plugin_errors(); `kiln plugins check` tells more):";
    const std::size_t shown = std::min<std::size_t>(plugin_errors_.size(), 3);
    for (std::size_t i = 0; i < shown; ++i)
      why += std::string(i == 0 ? " " : "; ") + detail::printable(plugin_errors_[i].file) + ": " +
             detail::printable(plugin_errors_[i].reason);
    if (shown < plugin_errors_.size()) why += "; and " + std::to_string(plugin_errors_.size() - shown) + " more";
    throw UnknownOpError(why);
  }
}

Problem Runtime::make_problem(const OpSchema& schema, const Args& args) const {
  if (args.scalar_count() > static_cast<int>(schema.scalars.size()))
    throw ArgumentError(schema.name + ": expected at most " + std::to_string(schema.scalars.size()) + " scalars, got " +
                        std::to_string(args.scalar_count()));
  return derive_problem(schema, with_default_scalars(schema, args));
}

Problem Runtime::derive_problem(const OpSchema& schema, const Args& args) const {
  const int want = static_cast<int>(schema.tensors.size());
  if (args.tensor_count() != want) {
    std::string roles;
    for (const auto& r : schema.tensors) roles += (roles.empty() ? "" : ", ") + r.name;
    throw ArgumentError(schema.name + ": expected " + std::to_string(want) + " tensors (" + roles + "), got " +
                        std::to_string(args.tensor_count()));
  }
  Problem p;
  p.schema = &schema;
  p.device = args.tensor(0).device;
  int align = 16;
  std::int64_t spans[Args::kMaxTensors] = {};
  for (int i = 0; i < want; ++i) {
    const TensorRef& t = args.tensor(i);
    // Error text is built only on failure: this runs on every op() call.
    const int max_rank = schema.strided_views ? 3 : 2;
    if (t.shape.rank == 0)
      bad_argument(schema, i, ErrorKind::shape,
                   " is an empty view (rank 0: a default-constructed TensorRef or a moved-from Buffer)");
    if (t.shape.rank < 1 || t.shape.rank > max_rank)
      bad_argument(schema, i, ErrorKind::shape,
                   " must have rank 1 or 2" + (max_rank == 3 ? std::string(" or 3") : std::string()) + ", got " +
                       t.shape.to_string() + (max_rank == 2 && t.shape.rank == 3 ? " (this op takes no batches)" : ""));
    for (int d = 0; d < t.shape.rank; ++d)
      if (t.shape.dims[d] < 0) bad_argument(schema, i, ErrorKind::shape, " has a negative extent: " + t.shape.to_string());
    if (!schema.strided_views && !t.row_major())
      bad_argument(schema, i, ErrorKind::shape,
                   " has column stride " + std::to_string(t.col_stride) +
                       ": this op takes row-major views only (column stride 1), got " + t.to_string());
    if (t.shape.rank >= 2 && t.col_stride == 1 && t.row_stride < t.cols())
      bad_argument(schema, i, ErrorKind::shape,
                   " has row stride " + std::to_string(t.row_stride) + " < cols " + std::to_string(t.cols()));
    // A one-column matrix counts as row-major whatever its column stride, and strides_error() is
    // only asked for strided ops: rows 0 apart (an output whose rows all land on one element) or
    // a negative row stride (reported as a span past int64) passed the check above.
    if (!schema.strided_views && t.shape.rank >= 2 && t.rows() > 1 && t.cols() == 1 && t.row_stride < 1)
      bad_argument(schema, i, ErrorKind::shape,
                   " has row stride " + std::to_string(t.row_stride) + ": rows must be at least 1 element apart, got " +
                       t.to_string());
    if (dtype_size(t.dtype) == 0)  // DType(42): its size 0 would pass every byte check below
      bad_argument(schema, i, ErrorKind::dtype,
                   " has an unknown dtype (" + std::to_string(static_cast<unsigned>(t.dtype)) + ")");
    if (!t.shape.fits(t.dtype))
      bad_argument(schema, i, ErrorKind::shape, " " + t.shape.to_string() + " has more bytes than fit in int64");
    if (schema.strided_views) {  // "" (no allocation) for a valid view
      const std::string why = t.strides_error();
      if (!why.empty()) bad_argument(schema, i, ErrorKind::shape, ": " + why);
    }
    std::int64_t& span = spans[i];
    if (!t.span_fits(span)) bad_argument(schema, i, ErrorKind::shape, " " + t.to_string() + " spans more bytes than fit in int64");
    if (!t.data && t.numel() > 0) bad_argument(schema, i, ErrorKind::argument, " is a null pointer");
    if (t.read_only && schema.tensors[i].role != Role::input)
      bad_argument(schema, i, ErrorKind::argument,
                   " is read-only (a view of const memory), but the op writes it: make the view from non-const memory");
    // Every kernel reads elements through typed pointers: a pointer off its element size is
    // undefined behaviour on the host and a misaligned-address fault (which ends the CUDA
    // context) on a GPU, so no variant may see one.
    if (detail::misaligned_element(t)) bad_argument(schema, i, ErrorKind::argument, misaligned_what(t));
    if (!detail::well_formed(t.device)) bad_argument(schema, i, ErrorKind::device, detail::malformed_device(t.device));
    if (t.device != p.device)
      bad_argument(schema, i, ErrorKind::device,
                   " is on " + t.device.to_string() + ", but argument '" + schema.tensors[0].name + "' is on " +
                       p.device.to_string());
    align = std::min(align, t.alignment());
  }
  if (p.device.is_cuda()) device_info(p.device);  // throws DeviceError for a device that is not there
  int out_i = 0, other_j = 0;
  if (first_overlap(schema, args, spans, out_i, other_j)) overlap_error(schema, out_i, other_j);
  p.align_bytes = align;
  Problem derived = p;
  if (Status st = schema.make_problem(args, derived); !st.ok()) st.throw_if_error();
  derived.schema = &schema;
  derived.device = p.device;
  derived.align_bytes = p.align_bytes;
  return derived;
}

void Runtime::check_pointers(const OpSchema& schema, const Args& args, const Problem& p) const {
  if (!p.device.is_cuda()) return;
  for (int i = 0; i < args.tensor_count(); ++i) {
    const TensorRef& t = args.tensor(i);
    if (t.numel() == 0) continue;
    int owner = -1;
    const detail::PointerKind kind = detail::cuda_pointer_kind(t.data, owner);
    if (kind == detail::PointerKind::managed) continue;
    if (kind == detail::PointerKind::device && owner == p.device.ordinal) continue;
    std::string what;
    switch (kind) {
      case detail::PointerKind::device: what = "device memory of cuda:" + std::to_string(owner); break;
      case detail::PointerKind::registered_host: what = "pinned host memory"; break;
      case detail::PointerKind::unregistered_host: what = "host memory"; break;
      default: what = "memory CUDA does not know"; break;
    }
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", t.data);
    bad_argument(schema, i, ErrorKind::device,
                 " (" + std::string(addr) + ") is " + what + ", but it is tagged " + p.device.to_string() +
                     ": op() needs device or managed memory reachable from " + p.device.to_string());
  }
}

void* Runtime::find_workspace(Device device, Stream stream, std::size_t bytes) const noexcept {
  const WorkspaceTable* t = workspace_table_.load(std::memory_order_acquire);
  if (!t) return nullptr;
  const int ordinal = ordinal_of(device);
  for (const Workspace* w : t->current)
    if (w->ordinal == ordinal && w->stream == stream.handle()) return w->buffer.bytes() >= bytes ? w->buffer.data() : nullptr;
  return nullptr;
}

void* Runtime::workspace(Device device, Stream stream, std::size_t bytes) {
  // Checked first (op() reaches here only for a problem's device, already checked): a Device
  // filled in by hand (Device{host, 7}) was handed the host's workspace when it had one, and
  // otherwise refused by "Buffer::alloc", a function the caller never called.
  if (device != Device::host()) {
    try {
      device_info(device);
    } catch (const DeviceError& e) {
      throw DeviceError(std::string("Runtime::workspace: argument 'device': ") + e.what());
    }
  }
  if (bytes == 0) return nullptr;
  if (bytes > static_cast<std::size_t>(INT64_MAX))  // Buffer sizes are int64
    throw ArgumentError("Runtime::workspace: " + std::to_string(bytes) + " bytes requested on " + device.to_string() +
                        ", more than fit in int64");
  if (void* ws = find_workspace(device, stream, bytes)) return ws;
  std::lock_guard<std::mutex> lock(workspace_mutex_);
  if (void* ws = find_workspace(device, stream, bytes)) return ws;
  if (device.is_cuda() && detail::cuda_stream_capturing(stream.handle()))
    throw DeviceError("kiln: " + std::to_string(bytes) + " bytes of workspace needed on " + device.to_string() +
                      " for a stream that is capturing a CUDA graph, and allocating now would break the capture: "
                      "call op() or Op::prepare() once on this stream before capturing, or "
                      "Runtime::reserve_workspace(device, stream, bytes)");
  auto w = std::make_unique<Workspace>();
  w->ordinal = ordinal_of(device);
  w->stream = stream.handle();
  w->buffer = Buffer::alloc(device, u8, {static_cast<std::int64_t>(bytes)});
  // A new table with this workspace in place of the smaller one; the old table and buffer stay
  // allocated (a thread may be launching with them right now).
  auto table = std::make_unique<WorkspaceTable>();
  if (const WorkspaceTable* old = workspace_table_.load(std::memory_order_relaxed))
    for (const Workspace* x : old->current)
      if (!(x->ordinal == w->ordinal && x->stream == w->stream)) table->current.push_back(x);
  table->current.push_back(w.get());
  void* data = w->buffer.data();
  workspaces_.push_back(std::move(w));
  workspace_tables_.push_back(std::move(table));
  workspace_table_.store(workspace_tables_.back().get(), std::memory_order_release);
  return data;
}

const Decision& Runtime::decide_for_launch(const Problem& p, Stream stream) {
  if (p.device.is_cuda() && detail::cuda_stream_capturing(stream.handle()))
    throw DeviceError("kiln: " + (p.schema ? p.schema->name : std::string("op")) + " " + p.key() +
                      " is called for the first time while its stream is capturing a CUDA graph; deciding may "
                      "allocate (workspace, library handles) and would break the capture: call op() or "
                      "Op::prepare() once with this problem on this stream before capturing");
  const Decision& d = dispatcher_.decide(p, device_info(p.device));
  if (d.workspace_bytes) workspace(p.device, stream, d.workspace_bytes);
  return d;
}

void Runtime::launch(const OpSchema& schema, const Args& args, Stream stream,
                     std::atomic<const detail::BoundCall*>& hint) {
  // The hot path: this Op's last call had the same layout and its decision is still current.
  const detail::BoundCall* b = hint.load(std::memory_order_acquire);
  if (b) b->prefetch();
  const int n_scalars = static_cast<int>(schema.scalars.size());
  if (b && !check_every_call_ && b->problem.schema == &schema && b->generation == dispatcher_.generation() &&
      detail::same_layout(b->layout, args)) {
    if (args.scalar_count() == n_scalars) {  // same layout: as many scalars as the bound call
      if (launch_bound(schema, args, *b, stream)) return;
    } else if (launch_bound(schema, with_default_scalars(schema, args), *b, stream)) {
      return;
    }
  }
  if (args.scalar_count() == n_scalars) return launch_checked(schema, args, args, stream, hint);
  if (args.scalar_count() > n_scalars) make_problem(schema, args);  // throws
  launch_checked(schema, args, with_default_scalars(schema, args), stream, hint);
}

bool Runtime::launch_bound(const OpSchema& schema, const Args& filled, const detail::BoundCall& bound, Stream stream) {
  // The core's checks passed for this layout; the pointer checks run again (an output overlapping
  // another argument), and the schema's, which must give the bound problem.
  int out_i = 0, other_j = 0;
  if (first_overlap(schema, filled, bound.layout.span_bytes, out_i, other_j)) return false;  // the full path says why
  // A copy, not a zeroed Problem: make_problem writes the dims it sets, the bound problem came from
  // the same layout through a zeroed one, so the dims it leaves stay as they were there (the copy
  // is a few vector moves where zeroing cost a `rep stos`, half of this function's time).
  Problem q = bound.problem;
  if (!schema.make_problem(filled, q).ok() || !q.same_key(bound.problem)) return false;
  run_launch(schema, *bound.launch, bound.workspace_bytes, *bound.decision, filled, bound.problem, stream);
  return true;
}

void Runtime::launch_checked(const OpSchema& schema, const Args& args, const Args& filled, Stream stream,
                             std::atomic<const detail::BoundCall*>& hint) {
  const Problem p = derive_problem(schema, filled);
  const detail::BoundCall* bound = nullptr;
  const Decision* d = check_every_call_ ? dispatcher_.find(p) : dispatcher_.find_bound(p, args, &bound);
  if (!d || check_every_call_) check_pointers(schema, filled, p);
  if (!d) {
    d = &decide_for_launch(p, stream);
    if (!check_every_call_) dispatcher_.find_bound(p, args, &bound);  // bind the new decision
  }
  run_decision(schema, *d, filled, p, stream);
  if (bound) hint.store(bound, std::memory_order_release);
}

void Runtime::run_decision(const OpSchema& schema, const Decision& d, const Args& filled, const Problem& p,
                           Stream stream) {
  run_launch(schema, *d.launch, d.workspace_bytes, d, filled, p, stream);
}

void Runtime::run_launch(const OpSchema& schema, const PreparedLaunch& launch, std::size_t workspace_bytes,
                         const Decision& d, const Args& filled, const Problem& p, Stream stream) {
  if (multi_device_ && p.device.is_cuda()) detail::cuda_set_device(p.device.ordinal);
  void* ws = nullptr;
  if (workspace_bytes) {
    ws = find_workspace(p.device, stream, workspace_bytes);
    if (!ws) ws = workspace(p.device, stream, workspace_bytes);  // first call on this stream
  }
  Status st = launch.run(filled, p, ws, stream);
  if (!st.ok()) st.throw_if_error(schema.name + " (" + d.variant->name() + ")");
}

void Runtime::prepare(const OpSchema& schema, const Args& args, Stream stream) {
  const Args filled = with_default_scalars(schema, args);
  if (args.scalar_count() > static_cast<int>(schema.scalars.size())) make_problem(schema, args);  // throws
  const Problem p = derive_problem(schema, filled);
  check_pointers(schema, filled, p);
  const Decision* d = dispatcher_.find(p);
  if (!d) d = &decide_for_launch(p, stream);
  if (d->workspace_bytes) workspace(p.device, stream, d->workspace_bytes);
}

void Runtime::run_variant(const Variant& variant, const Config& config, const Args& args, Stream stream) {
  const OpSchema& schema = registry_.op(variant.op());
  const Problem p = make_problem(schema, args);
  const Args filled = with_default_scalars(schema, args);
  const DeviceInfo& dev = device_info(p.device);
  if (variant.device_kind() != p.device.kind)
    throw DeviceError(variant.name() + " runs on " + device_kind_name(variant.device_kind()) + ", the arguments are on " +
                      p.device.to_string());
  // As op(): a host or another GPU's pointer tagged cuda:N would fault in the kernel and end the context.
  check_pointers(schema, filled, p);
  if (auto bad = variant.space().violated(config, dev, p)) throw ArgumentError(variant.name() + ": " + *bad);
  Support s = variant.supports_or_no(p, dev, config);
  if (!s.ok) throw NoVariantError(variant.name() + " does not support " + p.key() + ": " + s.reason);
  if (p.device.is_cuda() && cuda_device_count() > 1) detail::cuda_set_device(p.device.ordinal);
  const std::size_t bytes = variant.workspace_bytes(p, config);
  void* ws = bytes ? workspace(p.device, stream, bytes) : nullptr;
  variant.launch(filled, p, config, ws, stream).throw_if_error(variant.name());
}

Decision Runtime::explain(const Problem& problem) const {
  // A Problem filled in by hand (a plain struct) is checked as op() would have made it: a schema
  // of this registry, its dims, dtype, device and alignment.
  dispatcher_.check_problem(problem, "Runtime::explain");
  return dispatcher_.decide_uncached(problem, device_info(problem.device));
}

void Op::operator()(const Args& args, Stream stream) const { rt_->launch(live_schema(), args, stream, bound_); }

Problem Op::problem(const Args& args) const { return rt_->make_problem(live_schema(), args); }

void Op::prepare(const Args& args, Stream stream) const { rt_->prepare(live_schema(), args, stream); }

void Op::throw_runtime_gone() {
  throw Error("kiln::Op used after the Runtime that made it was destroyed: an Op is usable only while its Runtime "
              "lives (keep the Runtime, e.g. as a member next to its Ops)");
}

}  // namespace kiln
