// PluginLoader: finds kiln plugins (files named libkiln_*.so) and loads them into a Registry.
// What Runtime does at start-up, and what `kiln plugins check` does one file at a time:
//
//   kiln::Registry registry;
//   kiln::PluginLoader loader;
//   loader.load_dirs(kiln::PluginLoader::default_search_path(), registry);
//   for (const kiln::PluginLoadError& e : loader.errors()) std::cerr << e.file << ": " << e.reason << "\n";
//
// Writing a plugin: kiln/plugin.hpp (the plugin-author header with KILN_PLUGIN).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kiln/registry.hpp"

namespace kiln {

struct PluginLoadError {
  std::string file;
  std::string reason;
};

// Loading runs plugin code inside this process: a library whose static initialiser crashes or
// calls exit() takes the process with it, and no loader can prevent that.  `kiln plugins check`
// loads each file in a child process and names the one that does.
class PluginLoader {
 public:
  // The search path: KILN_PLUGIN_PATH (':'-separated) when set and not empty, else the install's
  // plugin dir.  An empty entry stands for the install's plugin dir.
  static std::vector<std::string> default_search_path();
  // Loads every kiln plugin found in `dirs` (files named libkiln_*.so) into `registry`.  A file
  // that fails is skipped and reported in errors(); the others still load.  A relative directory
  // is refused (it would load libraries from the working directory).  The shipped directory
  // (shipped_dir()) is loaded first wherever it is listed, so its plugins keep their names: a
  // later plugin's schema or variant whose name is taken is refused (reported in errors()) and
  // the rest of that plugin still loads.
  void load_dirs(const std::vector<std::string>& dirs, Registry& registry);
  // Loads one file; returns false (and records the reason) when it is skipped.  Before dlopen the
  // file must be a regular file holding a whole ELF shared library for this machine (a truncated
  // library would kill the process with SIGBUS inside dlopen).  Returns true when the plugin
  // loaded, also when some of its names were refused as duplicates (each one is in errors()).
  bool load_file(const std::string& file, Registry& registry);
  const std::vector<PluginLoadError>& errors() const { return errors_; }
  // Things that load but look wrong: a default config outside its variant's space, a file named
  // like a plugin that is not a regular file (a dangling link, a directory, a FIFO).
  const std::vector<PluginLoadError>& warnings() const { return warnings_; }
  const std::vector<std::string>& loaded() const { return loaded_; }
  // The plugin of each file in loaded(), in the same order: name, version, build id, file (also
  // for a plugin that registers nothing, e.g. the vendor plugin of a build without CUDA).
  const std::vector<Source>& loaded_plugins() const { return loaded_plugins_; }
  // The directory of the plugins built and installed with kiln (default: the install's plugin
  // directory); tests point it elsewhere.
  const std::string& shipped_dir() const { return shipped_dir_; }
  void set_shipped_dir(std::string dir) { shipped_dir_ = std::move(dir); }

 private:
  void warn(const std::string& file, const std::string& what);
  // Warns about each variant whose default config lies outside its own space.
  void check_defaults(const Registry& staged, const std::string& file);
  std::vector<PluginLoadError> errors_;
  std::vector<PluginLoadError> warnings_;
  std::vector<std::string> loaded_;
  std::vector<Source> loaded_plugins_;
  std::string shipped_dir_ = default_shipped_dir();
  static std::string default_shipped_dir();
};

// Why `file` cannot be a loadable plugin for this machine, judged from its type, size and ELF
// headers without loading it; empty when it looks like a whole shared library.
std::string plugin_file_problem(const std::string& file);

}  // namespace kiln
