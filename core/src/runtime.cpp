#include "kiln/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "cuda_backend.hpp"
#include "kiln/buffer.hpp"
#include "kiln/log.hpp"
#include "spelling.hpp"
#include "tune_modes.hpp"

namespace kiln {

struct Runtime::Workspace {
  Buffer buffer;
};

namespace {

Args with_default_scalars(const OpSchema& schema, const Args& args) {
  Args filled = args;
  for (int i = args.scalar_count(); i < static_cast<int>(schema.scalars.size()); ++i)
    filled.push_scalar(schema.scalars[i].default_value);
  return filled;
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
  auto log = logger();
  if (options.load_plugins) {
    PluginLoader loader;
    const auto dirs = options.plugin_dirs.empty() ? PluginLoader::default_search_path() : options.plugin_dirs;
    loader.load_dirs(dirs, registry_, PluginHost{log});
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

  std::string mode = options.tune_mode;
  if (mode.empty()) {
    const char* env = std::getenv("KILN_TUNE");
    mode = env && *env ? env : "off";
    // From the environment, any case; a typo warns and tunes nothing rather than abort the program.
    for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto& modes = detail::tune_mode_names();
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      log->warn("KILN_TUNE='{}' is not a tuning mode{} (expected off, lazy or record); op() will not tune", env,
                detail::did_you_mean(mode, modes));
      mode = "off";
    }
  }
  detail::install_tune_mode(*this, mode);
  tune_mode_ = mode;
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

Op Runtime::op(const std::string& name) { return Op(this, &registry_.op(name)); }

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
  for (int i = 0; i < want; ++i) {
    const TensorRef& t = args.tensor(i);
    const std::string role = schema.name + ": argument '" + schema.tensors[i].name + "'";
    const int max_rank = schema.strided_views ? 3 : 2;
    if (t.shape.rank < 1 || t.shape.rank > max_rank)
      throw ShapeError(role + " must have rank 1 or 2" + (max_rank == 3 ? std::string(" or 3") : std::string()) + ", got " +
                       t.shape.to_string() + (max_rank == 2 && t.shape.rank == 3 ? " (this op takes no batches)" : ""));
    for (int d = 0; d < t.shape.rank; ++d)
      if (t.shape.dims[d] < 0) throw ShapeError(role + " has a negative extent: " + t.shape.to_string());
    if (!schema.strided_views && !t.row_major())
      throw ShapeError(role + " has column stride " + std::to_string(t.col_stride) +
                       ": this op takes row-major views only (column stride 1), got " + t.to_string());
    if (t.shape.rank >= 2 && t.col_stride == 1 && t.row_stride < t.cols())
      throw ShapeError(role + " has row stride " + std::to_string(t.row_stride) + " < cols " + std::to_string(t.cols()));
    if (!t.shape.fits(t.dtype)) throw ShapeError(role + " " + t.shape.to_string() + " has more bytes than fit in int64");
    if (schema.strided_views) {
      const std::string why = t.strides_error();
      if (!why.empty()) throw ShapeError(role + ": " + why);
    }
    std::int64_t span = 0;
    if (!t.span_fits(span)) throw ShapeError(role + " " + t.to_string() + " spans more bytes than fit in int64");
    if (!t.data && t.numel() > 0) throw ArgumentError(role + " is a null pointer");
    if (t.device != p.device)
      throw DeviceError(role + " is on " + t.device.to_string() + ", but argument '" + schema.tensors[0].name + "' is on " +
                        p.device.to_string());
    align = std::min(align, t.alignment());
  }
  if (p.device.is_cuda()) device_info(p.device);  // throws DeviceError for a device that is not there
  p.align_bytes = align;
  Problem derived = p;
  schema.make_problem(args, derived).throw_if_error();
  derived.schema = &schema;
  derived.device = p.device;
  derived.align_bytes = p.align_bytes;
  return derived;
}

void* Runtime::workspace(Device device, Stream stream, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(workspace_mutex_);
  auto& slot = workspaces_[{device.is_cuda() ? device.ordinal : -1, stream.handle()}];
  if (!slot) slot = std::make_unique<Workspace>();
  if (slot->buffer.bytes() < bytes) {
    // Grows only; freeing the old one synchronises the device, so queued work has finished with it.
    slot->buffer = Buffer();
    slot->buffer = Buffer::alloc(device, u8, {static_cast<std::int64_t>(bytes)});
  }
  return slot->buffer.data();
}

void Runtime::launch(const OpSchema& schema, const Args& args, Stream stream) {
  if (args.scalar_count() > static_cast<int>(schema.scalars.size())) make_problem(schema, args);  // throws
  const Args filled = with_default_scalars(schema, args);
  const Problem p = derive_problem(schema, filled);
  const DeviceInfo& dev = device_info(p.device);
  const Decision& d = dispatcher_.decide(p, dev);
  if (p.device.is_cuda() && cuda_device_count() > 1) detail::cuda_set_device(p.device.ordinal);
  void* ws = d.workspace_bytes ? workspace(p.device, stream, d.workspace_bytes) : nullptr;
  d.variant->launch(filled, p, d.config, ws, stream)
      .throw_if_error(schema.name + " (" + d.variant->name() + ")");
}

void Runtime::run_variant(const Variant& variant, const Config& config, const Args& args, Stream stream) {
  const OpSchema& schema = registry_.op(variant.op());
  const Problem p = make_problem(schema, args);
  const Args filled = with_default_scalars(schema, args);
  const DeviceInfo& dev = device_info(p.device);
  if (variant.device_kind() != p.device.kind)
    throw DeviceError(variant.name() + " runs on " + device_kind_name(variant.device_kind()) + ", the arguments are on " +
                      p.device.to_string());
  if (auto bad = variant.space().violated(config, dev, p)) throw ArgumentError(variant.name() + ": config " + *bad);
  Support s = variant.supports(p, dev, config);
  if (!s.ok) throw NoVariantError(variant.name() + " does not support " + p.key() + ": " + s.reason);
  if (p.device.is_cuda() && cuda_device_count() > 1) detail::cuda_set_device(p.device.ordinal);
  const std::size_t bytes = variant.workspace_bytes(p, config);
  void* ws = bytes ? workspace(p.device, stream, bytes) : nullptr;
  variant.launch(filled, p, config, ws, stream).throw_if_error(variant.name());
}

Decision Runtime::explain(const Problem& problem) const {
  return dispatcher_.decide_uncached(problem, device_info(problem.device));
}

void Op::operator()(const Args& args, Stream stream) const { rt_->launch(*schema_, args, stream); }

Problem Op::problem(const Args& args) const { return rt_->make_problem(*schema_, args); }

}  // namespace kiln
