// TuningDb: YAML layers (shipped files under one user file), lookup with device fallback and
// nearest-problem search, and crash- and race-safe writes of the user file.
#include "kiln/tuning_db.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "install_paths.hpp"
#include "kiln/errors.hpp"

namespace kiln {

namespace fs = std::filesystem;

bool TuningEntry::operator==(const TuningEntry& o) const {
  return variant == o.variant && config == o.config && median_us == o.median_us && mad_us == o.mad_us &&
         samples == o.samples && throughput == o.throughput && throughput_unit == o.throughput_unit &&
         plugin_name == o.plugin_name && plugin_version == o.plugin_version && plugin_build == o.plugin_build &&
         tuned_at == o.tuned_at;
}

namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

[[noreturn]] void fail(const std::string& what, const std::string& reason) {
  throw TuningDbError("tuning database '" + what + "': " + reason);
}

// ---- YAML -> table -------------------------------------------------------------------------

// Where we are in the document, for error messages: "devices/<dev>/<op>/<key>".
struct Where {
  const std::string& what;
  std::string path;

  [[noreturn]] void fail_at(const YAML::Node& node, const std::string& reason) const {
    std::string loc = "tuning database '" + what + "'";
    if (node.IsDefined() && node.Mark().line >= 0) loc += " line " + std::to_string(node.Mark().line + 1);
    throw TuningDbError(loc + ": " + (path.empty() ? "" : path + ": ") + reason);
  }
};

std::string scalar_string(const YAML::Node& node, const Where& at, const std::string& field) {
  if (node.IsNull()) return {};
  if (!node.IsScalar()) at.fail_at(node, "`" + field + "` must be a string");
  return node.Scalar();
}

template <typename T>
T scalar_number(const YAML::Node& node, const Where& at, const std::string& field, const char* kind) {
  if (!node.IsScalar()) at.fail_at(node, "`" + field + "` must be " + kind);
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    at.fail_at(node, "`" + field + "` must be " + kind + ", not '" + node.Scalar() + "'");
  }
}

// Iterates a map, rejecting duplicate keys (yaml-cpp keeps both silently).
template <typename Fn>
void for_each_unique(const YAML::Node& map, const Where& at, Fn&& fn) {
  std::map<std::string, bool> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) at.fail_at(kv.first, "keys must be strings");
    const std::string key = kv.first.Scalar();
    if (!seen.emplace(key, true).second) at.fail_at(kv.first, "duplicate key '" + key + "'");
    fn(key, kv.first, kv.second);
  }
}

TuningEntry parse_entry(const YAML::Node& node, const Where& at) {
  if (!node.IsMap()) at.fail_at(node, "an entry must be a map (variant, config, median_us, ...)");
  TuningEntry e;
  bool has_variant = false, has_config = false;
  for_each_unique(node, at, [&](const std::string& field, const YAML::Node&, const YAML::Node& value) {
    if (field == "variant") {
      e.variant = scalar_string(value, at, field);
      has_variant = true;
    } else if (field == "config") {
      if (!value.IsMap() && !value.IsNull()) at.fail_at(value, "`config` must be a map of name: integer");
      has_config = true;
      if (value.IsNull()) return;
      Where inner{at.what, at.path + "/config"};
      for_each_unique(value, inner, [&](const std::string& name, const YAML::Node&, const YAML::Node& v) {
        e.config.set(name, scalar_number<int>(v, inner, name, "an integer"));
      });
    } else if (field == "median_us") {
      e.median_us = scalar_number<double>(value, at, field, "a number");
    } else if (field == "mad_us") {
      e.mad_us = scalar_number<double>(value, at, field, "a number");
    } else if (field == "samples") {
      e.samples = scalar_number<int>(value, at, field, "an integer");
    } else if (field == "throughput") {
      e.throughput = scalar_number<double>(value, at, field, "a number");
    } else if (field == "throughput_unit") {
      e.throughput_unit = scalar_string(value, at, field);
    } else if (field == "tuned_at") {
      e.tuned_at = scalar_string(value, at, field);
    } else if (field == "plugin") {
      if (value.IsNull()) return;
      if (!value.IsMap()) at.fail_at(value, "`plugin` must be a map {name, version, build}");
      Where inner{at.what, at.path + "/plugin"};
      for_each_unique(value, inner, [&](const std::string& name, const YAML::Node&, const YAML::Node& v) {
        if (name == "name") e.plugin_name = scalar_string(v, inner, name);
        else if (name == "version") e.plugin_version = scalar_string(v, inner, name);
        else if (name == "build") e.plugin_build = scalar_string(v, inner, name);
        // Other fields are tolerated: a newer kiln may record more about the plugin.
      });
    }
    // Unknown entry fields are tolerated for the same reason; the schema number guards real changes.
  });
  if (!has_variant || e.variant.empty()) at.fail_at(node, "entry has no `variant`");
  if (!has_config) at.fail_at(node, "entry has no `config`");
  return e;
}

// ---- table -> YAML -------------------------------------------------------------------------

// Shortest text that reads back as the same double, independent of locale and of yaml-cpp's
// emitter precision (0.7 writes 17 digits: 2701.3 would become 2701.3000000000002).
std::string format_double(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// ---- files ---------------------------------------------------------------------------------

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

void create_parent_dirs(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) fail(path, "cannot create directory '" + parent.string() + "': " + ec.message());
}

// Advisory lock on "<path>.lock" for the lifetime of the object.  flock locks belong to the open
// file description, so two TuningDb objects in one process exclude each other as well.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : lock_path_(path + ".lock") {
    create_parent_dirs(path);
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path, "cannot open lock file '" + lock_path_ + "': " + errno_text(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd_);
      fail(path, "cannot lock '" + lock_path_ + "': " + errno_text(err));
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string lock_path_;
  int fd_ = -1;
};

// The user file as it is on disk now: empty when it does not exist, TuningDbError when corrupt.
TuningTable read_user_file(const std::string& path) {
  if (!file_exists(path)) return {};
  return TuningDb::read_file(path);
}

void append_yaml_files(const fs::path& dir, std::vector<std::string>& out) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->path().extension() == ".yaml" && it->is_regular_file(ec2)) found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

double log_distance(const ParsedKey& a, const ParsedKey& b) {
  double d = 0.0;
  for (int i = 0; i < a.n_dims; ++i) {
    double x = static_cast<double>(std::max<std::int64_t>(a.dims[i], 1));
    double y = static_cast<double>(std::max<std::int64_t>(b.dims[i], 1));
    d += std::fabs(std::log2(x) - std::log2(y));
  }
  return d;
}

bool same_dtype_and_names(const ParsedKey& a, const ParsedKey& b) {
  if (a.dtype != b.dtype || a.n_dims != b.n_dims) return false;
  for (int i = 0; i < a.n_dims; ++i)
    if (a.names[i] != b.names[i]) return false;
  return true;
}

constexpr FallbackLevel kLevels[] = {FallbackLevel::exact, FallbackLevel::arch_and_sms, FallbackLevel::arch,
                                     FallbackLevel::any};

}  // namespace

// ---- TuningDb ------------------------------------------------------------------------------

TuningDb::TuningDb(std::vector<std::string> shipped_paths, std::string user_path)
    : shipped_paths_(std::move(shipped_paths)), user_path_(std::move(user_path)) {
  reload();
}

void TuningDb::reload() {
  layers_.clear();
  errors_.clear();
  if (!user_path_.empty()) {
    // A missing user file is the normal first run: an empty, writable layer.
    try {
      layers_.push_back({user_path_, true, read_user_file(user_path_)});
    } catch (const TuningDbError& e) {
      errors_.push_back(e.what());
    }
  }
  // Later shipped files win over earlier ones, so they are searched first.
  for (auto it = shipped_paths_.rbegin(); it != shipped_paths_.rend(); ++it) {
    try {
      layers_.push_back({*it, false, read_file(*it)});
    } catch (const TuningDbError& e) {
      errors_.push_back(e.what());
    }
  }
}

std::string TuningDb::default_user_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string dir = env("KILN_CACHE_DIR"); !dir.empty()) return (fs::path(dir) / "tuning.yaml").string();
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return (fs::path(dir) / "kiln" / "tuning.yaml").string();
  if (std::string home = env("HOME"); !home.empty())
    return (fs::path(home) / ".cache" / "kiln" / "tuning.yaml").string();
  return {};  // nowhere to write: the runtime works from the shipped files only
}

std::vector<std::string> TuningDb::default_shipped_paths() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("KILN_CONFIG_PATH")) {
    // Set, even to "", means: exactly these (an empty value disables the shipped files).
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (item.empty()) continue;
      std::error_code ec;
      if (fs::is_directory(item, ec)) append_yaml_files(item, out);
      else out.push_back(item);  // a missing file is reported by the constructor
    }
    return out;
  }
  std::string dir = detail::installed_config_dir();
  std::error_code ec;
  if (!dir.empty() && fs::is_directory(dir, ec)) append_yaml_files(dir, out);
  return out;
}

std::optional<TuningHit> TuningDb::lookup(const DeviceInfo& device, const std::string& op, const Problem& problem,
                                          const std::string& bucket,
                                          const std::function<bool(const TuningEntry&)>& accept,
                                          const std::function<std::string(const Problem&)>& bucket_of_key) const {
  const std::string key = problem.key();
  ParsedKey want;
  const bool nearest_possible = bucket_of_key && parse_problem_key(key, want);
  auto accepted = [&](const TuningEntry& e) { return !accept || accept(e); };

  for (std::size_t li = 0; li < std::size(kLevels); ++li) {
    const FallbackLevel level = kLevels[li];
    // Device keys that match here for the first time (a key matching at a more specific level
    // was already tried there).
    auto new_at_level = [&](const std::string& stored) {
      if (!fingerprint_matches(stored, device, level)) return false;
      for (std::size_t k = 0; k < li; ++k)
        if (fingerprint_matches(stored, device, kLevels[k])) return false;
      return true;
    };

    for (const TuningLayer& layer : layers_) {
      std::vector<const std::pair<const std::string, std::map<std::string, TuningEntry>>*> ops;  // (device, entries)
      std::vector<const std::string*> device_keys;
      for (const auto& [dev, op_map] : layer.table) {
        if (!new_at_level(dev)) continue;
        auto it = op_map.find(op);
        if (it == op_map.end()) continue;
        ops.push_back(&*it);
        device_keys.push_back(&dev);
      }
      if (ops.empty()) continue;

      // The exact problem key, under each matching device key in order.
      for (std::size_t d = 0; d < ops.size(); ++d) {
        const auto& entries = ops[d]->second;
        auto hit = entries.find(key);
        if (hit != entries.end() && accepted(hit->second))
          return TuningHit{hit->second, layer.path, *device_keys[d], key, level, true};
      }
      if (!nearest_possible) continue;

      // The nearest entry of the same bucket: same dtype and dim names, smallest log-distance.
      struct Candidate {
        double distance;
        const std::string* key;
        std::size_t device;
        const TuningEntry* entry;
      };
      std::vector<Candidate> candidates;
      for (std::size_t d = 0; d < ops.size(); ++d) {
        for (const auto& [stored_key, entry] : ops[d]->second) {
          if (stored_key == key) continue;  // already tried (and rejected) above
          ParsedKey pk;
          if (!parse_problem_key(stored_key, pk) || !same_dtype_and_names(pk, want)) continue;
          Problem other = problem;
          other.dtype = pk.dtype;
          other.n_dims = pk.n_dims;
          for (int i = 0; i < Problem::kMaxDims; ++i) other.dims[i] = i < pk.n_dims ? pk.dims[i] : 0;
          if (bucket_of_key(other) != bucket) continue;
          candidates.push_back({log_distance(pk, want), &stored_key, d, &entry});
        }
      }
      std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
        return std::tie(a.distance, *a.key, *device_keys[a.device]) <
               std::tie(b.distance, *b.key, *device_keys[b.device]);
      });
      for (const Candidate& c : candidates)
        if (accepted(*c.entry)) return TuningHit{*c.entry, layer.path, *device_keys[c.device], *c.key, level, false};
    }
  }
  return std::nullopt;
}

void TuningDb::put(const std::string& device_key, const std::string& op, const std::string& problem_key,
                   const TuningEntry& entry) {
  if (user_path_.empty()) throw TuningDbError("tuning database: no user file is configured, cannot store entries");
  TuningTable table;
  {
    FileLock lock(user_path_);
    // Re-read under the lock so entries another process stored meanwhile survive.  A corrupt file
    // throws here, before anything is written.
    table = read_user_file(user_path_);
    table[device_key][op][problem_key] = entry;
    write_file(user_path_, table);
  }
  auto user = std::find_if(layers_.begin(), layers_.end(), [](const TuningLayer& l) { return l.writable; });
  if (user != layers_.end()) user->table = std::move(table);
  else layers_.insert(layers_.begin(), TuningLayer{user_path_, true, std::move(table)});
}

void TuningDb::update(const std::function<void(TuningTable&)>& edit) {
  if (user_path_.empty()) throw TuningDbError("tuning database: no user file is configured, cannot update it");
  TuningTable table;
  {
    FileLock lock(user_path_);
    table = read_user_file(user_path_);  // a corrupt file throws here, before anything is written
    if (edit) edit(table);
    write_file(user_path_, table);
  }
  auto user = std::find_if(layers_.begin(), layers_.end(), [](const TuningLayer& l) { return l.writable; });
  if (user != layers_.end()) user->table = std::move(table);
  else layers_.insert(layers_.begin(), TuningLayer{user_path_, true, std::move(table)});
}

std::size_t TuningDb::prune(const std::function<bool(const std::string& device, const std::string& op,
                                                     const std::string& key, const TuningEntry&)>& drop) {
  if (user_path_.empty() || !drop) return 0;
  std::size_t removed = 0;
  TuningTable table;
  {
    FileLock lock(user_path_);
    table = read_user_file(user_path_);
    for (auto dev = table.begin(); dev != table.end();) {
      for (auto o = dev->second.begin(); o != dev->second.end();) {
        for (auto k = o->second.begin(); k != o->second.end();) {
          if (drop(dev->first, o->first, k->first, k->second)) {
            k = o->second.erase(k);
            ++removed;
          } else {
            ++k;
          }
        }
        o = o->second.empty() ? dev->second.erase(o) : std::next(o);
      }
      dev = dev->second.empty() ? table.erase(dev) : std::next(dev);
    }
    if (removed > 0) write_file(user_path_, table);
  }
  auto user = std::find_if(layers_.begin(), layers_.end(), [](const TuningLayer& l) { return l.writable; });
  if (user != layers_.end()) user->table = std::move(table);
  else layers_.insert(layers_.begin(), TuningLayer{user_path_, true, std::move(table)});
  return removed;
}

TuningTable TuningDb::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open: " + errno_text(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot read: " + errno_text(errno));
  return from_yaml(text.str(), path);
}

void TuningDb::write_file(const std::string& path, const TuningTable& table) {
  const std::string text = to_yaml(table);
  create_parent_dirs(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot create '" + tmp + "': " + errno_text(errno));
  auto give_up = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, what + ": " + errno_text(err));
  };
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("cannot write '" + tmp + "'");
    }
    done += static_cast<std::size_t>(n);
  }
  // fsync before rename: after a crash the file is either the old one or the complete new one.
  if (::fsync(fd) != 0) give_up("cannot sync '" + tmp + "'");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot close '" + tmp + "': " + errno_text(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot rename '" + tmp + "' over it: " + errno_text(err));
  }
  // Make the rename itself durable; failure here loses nothing already visible, so it is ignored.
  fs::path dir = fs::path(path).parent_path();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string TuningDb::to_yaml(const TuningTable& table) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << kTuningDbSchema;
  out << YAML::Key << "devices" << YAML::Value;
  if (table.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& [dev, ops] : table) {
    out << YAML::Key << YAML::DoubleQuoted << dev << YAML::Value << YAML::BeginMap;
    for (const auto& [op, entries] : ops) {
      out << YAML::Key << op << YAML::Value << YAML::BeginMap;
      for (const auto& [key, e] : entries) {
        out << YAML::Key << YAML::DoubleQuoted << key << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "variant" << YAML::Value << e.variant;
        out << YAML::Key << "config" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto& [name, value] : e.config.values()) out << YAML::Key << name << YAML::Value << value;
        out << YAML::EndMap;
        out << YAML::Key << "median_us" << YAML::Value << format_double(e.median_us);
        out << YAML::Key << "mad_us" << YAML::Value << format_double(e.mad_us);
        out << YAML::Key << "samples" << YAML::Value << e.samples;
        out << YAML::Key << "throughput" << YAML::Value << format_double(e.throughput);
        out << YAML::Key << "throughput_unit" << YAML::Value << e.throughput_unit;
        out << YAML::Key << "plugin" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << e.plugin_name;
        out << YAML::Key << "version" << YAML::Value << e.plugin_version;
        out << YAML::Key << "build" << YAML::Value << e.plugin_build;
        out << YAML::EndMap;
        out << YAML::Key << "tuned_at" << YAML::Value << e.tuned_at;
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
  if (!out.good()) throw TuningDbError("tuning database: cannot emit YAML: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

TuningTable TuningDb::from_yaml(const std::string& text, const std::string& what) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    std::string loc = "tuning database '" + what + "'";
    if (e.mark.line >= 0)
      loc += " line " + std::to_string(e.mark.line + 1) + " column " + std::to_string(e.mark.column + 1);
    throw TuningDbError(loc + ": invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    fail(what, std::string("invalid YAML: ") + e.what());
  }

  TuningTable table;
  // An empty document (e.g. a file created with `touch`) holds no entries; that is not corrupt.
  if (root.IsNull()) return table;
  Where top{what, ""};
  if (!root.IsMap()) top.fail_at(root, "the document must be a map with `schema:` and `devices:`");

  const YAML::Node schema = root["schema"];
  if (!schema.IsDefined()) top.fail_at(root, "no `schema:` (expected schema: " + std::to_string(kTuningDbSchema) + ")");
  int version = 0;
  try {
    version = schema.as<int>();
  } catch (const YAML::Exception&) {
    top.fail_at(schema, "`schema:` must be an integer, not '" + (schema.IsScalar() ? schema.Scalar() : std::string("?")) + "'");
  }
  if (version != kTuningDbSchema)
    top.fail_at(schema, "schema " + std::to_string(version) + " is not supported (this kiln reads schema " +
                            std::to_string(kTuningDbSchema) + ")");

  const YAML::Node devices = root["devices"];
  if (!devices.IsDefined() || devices.IsNull()) return table;
  if (!devices.IsMap()) top.fail_at(devices, "`devices:` must be a map of device fingerprint -> ops");
  Where at_devices{what, "devices"};
  for_each_unique(devices, at_devices, [&](const std::string& dev, const YAML::Node&, const YAML::Node& ops) {
    Where at_dev{what, "devices/\"" + dev + "\""};
    auto& dev_table = table[dev];
    if (ops.IsNull()) return;
    if (!ops.IsMap()) at_dev.fail_at(ops, "must be a map of op -> problem keys");
    for_each_unique(ops, at_dev, [&](const std::string& op, const YAML::Node&, const YAML::Node& keys) {
      Where at_op{what, at_dev.path + "/" + op};
      auto& op_table = dev_table[op];
      if (keys.IsNull()) return;
      if (!keys.IsMap()) at_op.fail_at(keys, "must be a map of problem key -> entry");
      for_each_unique(keys, at_op, [&](const std::string& key, const YAML::Node&, const YAML::Node& entry) {
        op_table.emplace(key, parse_entry(entry, Where{what, at_op.path + "/\"" + key + "\""}));
      });
    });
  });
  return table;
}

std::size_t merge_tables(TuningTable& into, const TuningTable& from, bool prefer_newer) {
  std::size_t changed = 0;
  for (const auto& [dev, ops] : from) {
    for (const auto& [op, entries] : ops) {
      auto& target = into[dev][op];
      for (const auto& [key, entry] : entries) {
        auto it = target.find(key);
        if (it == target.end()) {
          target.emplace(key, entry);
          ++changed;
          continue;
        }
        if (it->second == entry) continue;
        // ISO 8601 UTC timestamps of one format order as strings.
        bool take = prefer_newer ? entry.tuned_at > it->second.tuned_at : entry.median_us < it->second.median_us;
        if (take) {
          it->second = entry;
          ++changed;
        }
      }
    }
  }
  return changed;
}

}  // namespace kiln
