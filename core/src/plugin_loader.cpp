// PluginLoader: finds libkiln_*.so files, probes the Boost.DLL alias, checks the ABI, registers
// into a staging registry and merges it, refusing (one by one, with a reason) the names another
// plugin already holds.  A bad file is skipped with a reason; nothing thrown gets out.
#include "kiln/plugin_loader.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "kiln/plugin.hpp"  // PluginInfo, kPluginAbiVersion (and BOOST_DLL_USE_STD_FS)

#include <boost/dll/shared_library.hpp>

#include "install_paths.hpp"
#include "kiln/errors.hpp"
#include "logger.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln {
namespace fs = std::filesystem;

namespace {

constexpr const char* kEntrySymbol = "kiln_plugin_entry";

bool is_plugin_file_name(const std::string& name) {
  const std::string prefix = "libkiln_";
  const std::string suffix = ".so";
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string text_or_empty(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// The file a plugin name was already loaded from, or "" (the registry is the record: it holds
// the source of every schema and variant, whichever loader put it there).
std::string file_of_plugin(const Registry& registry, const std::string& plugin) {
  for (const std::string& op : registry.op_names()) {
    const OpSchema* schema = registry.find_op(op);
    if (schema != nullptr && registry.source_of(*schema).plugin == plugin) return registry.source_of(*schema).file;
  }
  for (const Variant* v : registry.all_variants()) {
    if (registry.source_of(*v).plugin == plugin) return registry.source_of(*v).file;
  }
  return {};
}

// The dlerror() text inside Boost.DLL's "load() failed (dlerror system message: <text>): <errc>",
// or the whole message when it has another form, with every byte outside printable ASCII as \xNN.
// dlerror quotes what the library holds (a symbol or DT_NEEDED name: any bytes a hostile file
// chose, escape sequences and raw 0x80-0xFF included), and the reason is logged, printed by
// `kiln plugins` and kept in PluginLoadError.
std::string load_failure(const std::string& what) {
  const std::string marker = "(dlerror system message: ";
  const std::size_t begin = what.find(marker);
  const std::size_t end = what.rfind(')');
  if (begin == std::string::npos || end == std::string::npos || end < begin + marker.size())
    return detail::printable(what);
  return detail::printable(what.substr(begin + marker.size(), end - begin - marker.size()));
}

// Same file (symlinks and relative paths resolved)?  False when either cannot be resolved.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

// The ELF machine this build of kiln runs on: a plugin for another one cannot load.
#if defined(__x86_64__)
constexpr int kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kElfMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kElfMachine = EM_PPC64;
#else
constexpr int kElfMachine = -1;  // not checked
#endif

// Reads exactly `n` bytes at `offset`; false on a short read.
bool read_at(int fd, void* out, std::size_t n, off_t offset) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
    offset += got;
  }
  return true;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The checks on a file opened for reading.
std::string elf_problem(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < sizeof(Elf64_Ehdr))
    return "truncated or not a library: " + std::to_string(size) + " bytes, smaller than an ELF header (" +
           std::to_string(sizeof(Elf64_Ehdr)) + " bytes)";
  Elf64_Ehdr h{};
  if (!read_at(fd, &h, sizeof h, 0)) return "cannot read its ELF header";
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file (no ELF magic number)";
  if (h.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file (ELF class " + std::to_string(h.e_ident[EI_CLASS]) + ")";
  if (h.e_ident[EI_DATA] != ELFDATA2LSB) return "not a little-endian ELF file";
  if (h.e_type != ET_DYN) return "not a shared library (ELF type " + std::to_string(h.e_type) + ")";
  if (kElfMachine >= 0 && h.e_machine != kElfMachine)
    return "built for another machine (ELF machine " + std::to_string(h.e_machine) + ", this kiln runs on " +
           std::to_string(kElfMachine) + ")";
  // Every loadable segment must lie inside the file: dlopen maps them, and touching a mapped page
  // past the end of a truncated file raises SIGBUS in the loading process.
  if (h.e_phentsize != sizeof(Elf64_Phdr) || h.e_phnum == 0) return "malformed ELF header (program headers)";
  const std::uint64_t ph_end = h.e_phoff + std::uint64_t(h.e_phnum) * sizeof(Elf64_Phdr);
  if (h.e_phoff > size || ph_end > size || ph_end < h.e_phoff)
    return "truncated: its program headers end at byte " + std::to_string(ph_end) + " of " + std::to_string(size);
  for (int i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(fd, &ph, sizeof ph, static_cast<off_t>(h.e_phoff + std::uint64_t(i) * sizeof ph)))
      return "cannot read its program headers";
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    const std::uint64_t end = ph.p_offset + ph.p_filesz;
    if (end < ph.p_offset || end > size)
      return "truncated: a segment at offset " + hex(ph.p_offset) + " ends at byte " + std::to_string(end) +
             ", past the end of the file (" + std::to_string(size) + " bytes)";
  }
  if (h.e_shnum > 0) {
    const std::uint64_t sh_end = h.e_shoff + std::uint64_t(h.e_shnum) * h.e_shentsize;
    if (h.e_shoff > size || sh_end > size || sh_end < h.e_shoff)
      return "truncated: its section headers end at byte " + std::to_string(sh_end) + " of " + std::to_string(size);
  }
  return {};
}

}  // namespace

namespace {

// Why a directory entry is no file to load, judged from its type alone: a link to nothing (with
// its target), a directory, a FIFO, socket or device; empty for a regular file, or for a path
// that is not there at all (open() says so).  The loader's directory scan, plugin_file_problem
// and `kiln plugins check` word it the same through this.
std::string entry_type_problem(const std::string& file) {
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);  // follows links: libkiln_x.so -> .so.1 counts
  if (fs::is_regular_file(status)) return {};
  if (fs::is_symlink(fs::symlink_status(file, ec)) && !fs::exists(status)) {
    std::string why = "a symbolic link to a file that does not exist";
    const fs::path target = fs::read_symlink(file, ec);
    if (!ec) why += " ('" + detail::printable(target.string()) + "')";
    return why;
  }
  if (!fs::exists(status)) return {};
  if (fs::is_directory(status)) return "not a regular file: a directory named like a plugin";
  return "not a regular file (a FIFO, socket or device)";
}

}  // namespace

std::string plugin_file_problem(const std::string& file) {
  if (std::string why = entry_type_problem(file); !why.empty()) return why;
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  std::string problem;
  try {
    problem = elf_problem(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return problem;
}

std::string PluginLoader::default_shipped_dir() {
  try {
    return detail::installed_plugin_dir();
  } catch (...) {
    return {};
  }
}

void PluginLoader::warn(const std::string& file, const std::string& what) {
  try {
    logger()->warn("plugin {}: {}", detail::control_escaped(file), detail::control_escaped(what));
  } catch (...) {
  }
  warnings_.push_back({file, what});
}

void PluginLoader::check_defaults(const Registry& staged, const std::string& file) {
  for (const Variant* v : staged.all_variants()) {
    try {
      Device device = Device::host();
      if (v->device_kind() == DeviceKind::cuda) {
        if (cuda_device_count() == 0) continue;  // judged where a device exists
        device = Device::cuda(0);
      }
      const Config c = v->default_config(device_info(device));
      if (!v->space().contains(c))
        warn(file, "variant " + v->name() + ": its default config [" + c.to_string() + "] on " + device.to_string() +
                       " is outside its own space (" + v->space().to_string() + ")");
    } catch (const std::exception& e) {
      warn(file, "variant " + v->name() + ": default_config threw: " + e.what());
    } catch (...) {
      warn(file, "variant " + v->name() + ": default_config threw");
    }
  }
}

std::vector<std::string> PluginLoader::default_search_path() {
  // One rule with KILN_CONFIG_PATH (install_paths.hpp): unset, the installed plugins; "" none;
  // an empty entry ("/my/plugins:") stands for the installed directory, as in MANPATH.
  const std::string installed = detail::installed_plugin_dir();
  if (auto listed = detail::env_path_list("KILN_PLUGIN_PATH", installed)) return *listed;
  return {installed};
}

void PluginLoader::load_dirs(const std::vector<std::string>& listed, Registry& registry) {
  // The shipped directory goes first, so no other plugin can take the names of its schemas and
  // variants (first registered keeps a name).
  std::vector<std::string> dirs = listed;
  if (!shipped_dir_.empty()) {
    std::stable_partition(dirs.begin(), dirs.end(), [&](const std::string& d) {
      return fs::path(d).is_absolute() && (d == shipped_dir_ || same_file(d, shipped_dir_));
    });
  }
  std::vector<fs::path> seen_dirs;
  for (const std::string& dir : dirs) {
    std::vector<std::string> files;
    if (!fs::path(dir).is_absolute()) {
      // An error like any other directory that loads nothing (and so shown at the default log
      // level, and by `kiln plugins check`): a silent skip reads as "my plugin is not there".
      // The loader cannot tell where the entry came from (KILN_PLUGIN_PATH, whose empty entries
      // already stand for the installed directory, or RuntimeOptions::plugin_dirs), so the advice
      // names both.
      const std::string reason =
          dir.empty() ? "relative plugin directory ignored: the name is empty (give absolute directories in "
                        "RuntimeOptions::plugin_dirs or KILN_PLUGIN_PATH)"
                      : "relative plugin directory ignored: kiln never loads plugins from the working directory "
                        "(give absolute directories in KILN_PLUGIN_PATH or RuntimeOptions::plugin_dirs, e.g. $PWD/" +
                            dir + ")";
      try {
        logger()->error("plugin directory '{}': {}", detail::control_escaped(dir), detail::control_escaped(reason));
      } catch (...) {
      }
      errors_.push_back({dir, reason});
      continue;
    }
    try {
      std::error_code ec;
      // A directory listed twice (or reached through a symlink) is scanned once.
      const fs::path canonical = fs::canonical(dir, ec);
      if (!ec) {
        if (std::find(seen_dirs.begin(), seen_dirs.end(), canonical) != seen_dirs.end()) continue;
        seen_dirs.push_back(canonical);
      }
      fs::directory_iterator it(dir, ec);
      if (ec) {
        // A library named where its directory belongs said only "Not a directory".
        const std::string reason = ec == std::errc::not_a_directory
                                       ? "not a directory: the plugin path lists directories, and kiln loads the "
                                         "libkiln_*.so files in them (name the directory that holds this file)"
                                       : "cannot read plugin directory: " + ec.message();
        logger()->error("plugin directory {}: {}", detail::control_escaped(dir), detail::control_escaped(reason));
        errors_.push_back({dir, reason});
        continue;
      }
      for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (!is_plugin_file_name(it->path().filename().string())) continue;
        const std::string why = entry_type_problem(it->path().string());
        if (why.empty())
          files.push_back(it->path().string());  // a file that vanished since the listing: load_file says so
        else
          warn(it->path().string(), "skipped: " + why);
      }
      if (ec) {
        const std::string reason = "error while listing plugin directory: " + ec.message();
        logger()->error("plugin directory {}: {}", detail::control_escaped(dir), detail::control_escaped(reason));
        errors_.push_back({dir, reason});
      }
    } catch (const std::exception& e) {
      const std::string reason = std::string("cannot read plugin directory: ") + e.what();
      try {
        logger()->error("plugin directory {}: {}", detail::control_escaped(dir), detail::control_escaped(reason));
      } catch (...) {
      }
      errors_.push_back({dir, reason});
      continue;
    }
    std::sort(files.begin(), files.end());  // deterministic load order
    for (const std::string& file : files) {
      // The same library reached twice (a directory listed twice, a symlinked directory) is
      // loaded once, silently.
      const bool seen = std::any_of(loaded_.begin(), loaded_.end(),
                                    [&](const std::string& done) { return same_file(done, file); });
      if (!seen) load_file(file, registry);
    }
  }
}

bool PluginLoader::load_file(const std::string& file, Registry& registry) {
  const auto skip = [&](const std::string& reason) {
    try {
      logger()->error("plugin {} skipped: {}", detail::control_escaped(file), detail::control_escaped(reason));
    } catch (...) {
      // Logging must not turn a skipped plugin into an escaping exception.
    }
    errors_.push_back({file, reason});
    return false;
  };

  try {
    std::error_code ec;
    const fs::path path = fs::absolute(file, ec);  // never let dlopen search system folders

    const std::string problem = plugin_file_problem(path.string());
    if (!problem.empty()) return skip(problem);

    auto library = std::make_shared<boost::dll::shared_library>();
    try {
      // RTLD_NOW: a symbol the library needs and nothing defines (a plugin built against another
      // kiln, a library missing from its link) is a load error here.  With RTLD_LAZY the loader
      // found it only when the plugin first called it, and ld.so then ended the process
      // ("symbol lookup error", status 127).
      library->load(ec ? fs::path(file) : path,
                    boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      return skip("cannot load: " + load_failure(e.what()));
    }
    if (!library->has(kEntrySymbol)) return skip("no kiln_plugin_entry (not a kiln plugin)");

    PluginEntryFn& entry = library->get_alias<PluginEntryFn>(kEntrySymbol);
    const PluginInfo info = entry();
    if (info.abi_version != kPluginAbiVersion) {
      return skip("plugin ABI version " + std::to_string(info.abi_version) + ", but this kiln expects ABI version " +
                  std::to_string(kPluginAbiVersion) + " (rebuild the plugin against this kiln)");
    }
    const Source source{text_or_empty(info.name), text_or_empty(info.version), text_or_empty(info.build_id), file};
    if (source.plugin.empty()) return skip("the plugin entry gives no plugin name");
    if (info.register_fn == nullptr) return skip("plugin " + source.plugin + " has no register function");
    if (source.plugin == "direct") return skip("the plugin name 'direct' is reserved (it marks registration in code)");
    std::string earlier = file_of_plugin(registry, source.plugin);
    for (const Source& done : loaded_plugins_)  // also one whose plugin registered nothing
      if (earlier.empty() && done.plugin == source.plugin) earlier = done.file;
    if (!earlier.empty()) return skip("a plugin named '" + source.plugin + "' is already loaded from " + earlier);

    // Declared after `library`, so whatever the plugin put here is destroyed while its code is
    // still mapped.
    Registry staged;
    const Status status = info.register_fn(staged);
    if (!status.ok()) return skip("plugin " + source.plugin + " failed to register: " + status.message());
    check_defaults(staged, file);
    // Names already taken stay with their owner (the shipped plugins load first); this plugin's
    // other schemas and variants still load.
    for (const std::string& refused :
         registry.merge_keeping_existing(std::move(staged), source, std::shared_ptr<void>(library))) {
      try {
        logger()->error("plugin {}: {}", detail::control_escaped(file), detail::control_escaped(refused));
      } catch (...) {
      }
      errors_.push_back({file, refused});
    }
    loaded_.push_back(file);
    loaded_plugins_.push_back(source);
    try {
      logger()->info("loaded {}", source.to_string());
    } catch (...) {
      // Loaded and merged; a logging failure changes nothing.
    }
    return true;
  } catch (const std::exception& e) {
    return skip(std::string("unexpected error: ") + e.what());
  } catch (...) {
    return skip("unexpected error (not a std::exception)");
  }
}

}  // namespace kiln
