// PluginLoader: finds libkiln_*.so files, probes the Boost.DLL alias, checks the ABI, registers
// into a staging registry and merges it all or nothing.  A bad file is skipped with a reason;
// nothing thrown gets out.
#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS 1  // std::filesystem paths: no Boost.Filesystem to link
#endif
#include "kiln/plugin.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "install_paths.hpp"
#include "kiln/errors.hpp"
#include "kiln/log.hpp"

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
// or the whole message when it has another form.
std::string load_failure(const std::string& what) {
  const std::string marker = "(dlerror system message: ";
  const std::size_t begin = what.find(marker);
  const std::size_t end = what.rfind(')');
  if (begin == std::string::npos || end == std::string::npos || end < begin + marker.size()) return what;
  return what.substr(begin + marker.size(), end - begin - marker.size());
}

// Same file (symlinks and relative paths resolved)?  False when either cannot be resolved.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

}  // namespace

std::vector<std::string> PluginLoader::default_search_path() {
  const char* env = std::getenv("KILN_PLUGIN_PATH");
  if (env == nullptr || *env == '\0') return {detail::installed_plugin_dir()};
  // An empty entry ("/my/plugins:" or "a::b") stands for the installed plugin directory, as in
  // MANPATH, so a user can add a directory without losing the shipped plugins.
  std::vector<std::string> dirs;
  const std::string path = env;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (dir.empty()) dir = detail::installed_plugin_dir();
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return dirs;
}

void PluginLoader::load_dirs(const std::vector<std::string>& dirs, Registry& registry, const PluginHost& host) {
  std::vector<fs::path> seen_dirs;
  for (const std::string& dir : dirs) {
    std::vector<std::string> files;
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
        const std::string reason = "cannot read plugin directory: " + ec.message();
        logger()->error("plugin directory {}: {}", dir, reason);
        errors_.push_back({dir, reason});
        continue;
      }
      for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) break;
        std::error_code type_ec;
        // is_regular_file follows symlinks: libkiln_x.so -> libkiln_x.so.1 counts.
        if (is_plugin_file_name(it->path().filename().string()) && fs::is_regular_file(it->path(), type_ec)) {
          files.push_back(it->path().string());
        }
      }
      if (ec) {
        const std::string reason = "error while listing plugin directory: " + ec.message();
        logger()->error("plugin directory {}: {}", dir, reason);
        errors_.push_back({dir, reason});
      }
    } catch (const std::exception& e) {
      const std::string reason = std::string("cannot read plugin directory: ") + e.what();
      try {
        logger()->error("plugin directory {}: {}", dir, reason);
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
      if (!seen) load_file(file, registry, host);
    }
  }
}

bool PluginLoader::load_file(const std::string& file, Registry& registry, const PluginHost& host) {
  const auto skip = [&](const std::string& reason) {
    try {
      logger()->error("plugin {} skipped: {}", file, reason);
    } catch (...) {
      // Logging must not turn a skipped plugin into an escaping exception.
    }
    errors_.push_back({file, reason});
    return false;
  };

  try {
    std::error_code ec;
    const fs::path path = fs::absolute(file, ec);  // never let dlopen search system folders

    auto library = std::make_shared<boost::dll::shared_library>();
    try {
      library->load(ec ? fs::path(file) : path,
                    boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
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
    const std::string earlier = file_of_plugin(registry, source.plugin);
    if (!earlier.empty()) return skip("a plugin named '" + source.plugin + "' is already loaded from " + earlier);

    // Declared after `library`, so whatever the plugin put here is destroyed while its code is
    // still mapped.
    Registry staged;
    const Status status = info.register_fn(staged, host);
    if (!status.ok()) return skip("plugin " + source.plugin + " failed to register: " + status.message());
    try {
      registry.merge(std::move(staged), source, std::shared_ptr<void>(library));
    } catch (const RegistryError& e) {
      return skip(e.what());
    }
    loaded_.push_back(file);
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
