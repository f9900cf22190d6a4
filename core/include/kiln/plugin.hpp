// Plugins: a shared library that exports one Boost.DLL alias, `kiln_plugin_entry`, returning a
// PluginInfo.  A plugin source file ends with:
//
//   #include <kiln/plugin.hpp>
//   kiln::Status register_my_family(kiln::Registry& r) noexcept;   // adds schemas and variants
//   KILN_PLUGIN("my_family", "0.1.0", register_my_family)
//
// and is built with kiln_add_plugin(my_family SOURCES ...) (cmake/kiln_add_plugin.cmake), which
// also defines the build id.  The loader (PluginLoader) checks the ABI version, hands the plugin
// the host's logger, calls register into a staging registry and merges it all or nothing.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <spdlog/spdlog.h>

#include "kiln/errors.hpp"
#include "kiln/registry.hpp"

namespace kiln {

// Bumped whenever a type crossing the plugin boundary (Registry, Variant, OpSchema, Args, ...)
// changes layout or meaning.
// 3: TensorRef column and batch strides, rank-3 Shape, Problem::kMaxDims 8,
//    OpSchema::strided_views and mode_dims, Variant::prepare.
inline constexpr int kPluginAbiVersion = 3;

struct PluginHost {
  std::shared_ptr<spdlog::logger> logger;  // plugins log through the host's logger
};

struct PluginInfo {
  int abi_version = 0;
  const char* name = "";
  const char* version = "";
  const char* build_id = "";
  // Registers the plugin's schemas and variants.  Must not throw; failures come back as Status.
  Status (*register_fn)(Registry& registry, const PluginHost& host) = nullptr;
};

using PluginEntryFn = PluginInfo();

// The logger a plugin's code should use: the host's, set from PluginHost at registration (the
// default spdlog logger before that).  Inline with hidden visibility, so each plugin library
// keeps its own copy of the pointer.
inline std::shared_ptr<spdlog::logger>& plugin_logger() {
  static std::shared_ptr<spdlog::logger> logger = spdlog::default_logger();
  return logger;
}

struct PluginLoadError {
  std::string file;
  std::string reason;
};

// Loading runs plugin code inside this process: a library whose static initialiser crashes or
// calls exit() takes the process with it, and no loader can prevent that.  `kiln plugins check`
// loads each file in a child process and names the one that does.
class PluginLoader {
 public:
  // The search path: KILN_PLUGIN_PATH (':'-separated) when set, else the install's plugin dir.
  static std::vector<std::string> default_search_path();
  // Loads every kiln plugin found in `dirs` (files named libkiln_*.so) into `registry`.  A file
  // that fails is skipped and reported in errors(); the others still load.  A relative directory
  // is refused (it would load libraries from the working directory).  The shipped directory
  // (shipped_dir()) is loaded first wherever it is listed, so its plugins keep their names: a
  // later plugin's schema or variant whose name is taken is refused (reported in errors()) and
  // the rest of that plugin still loads.
  void load_dirs(const std::vector<std::string>& dirs, Registry& registry, const PluginHost& host);
  // Loads one file; returns false (and records the reason) when it is skipped.  Before dlopen the
  // file must be a regular file holding a whole ELF shared library for this machine (a truncated
  // library would kill the process with SIGBUS inside dlopen).  Returns true when the plugin
  // loaded, also when some of its names were refused as duplicates (each one is in errors()).
  bool load_file(const std::string& file, Registry& registry, const PluginHost& host);
  const std::vector<PluginLoadError>& errors() const { return errors_; }
  // Things that load but look wrong: a default config outside its variant's space, a file named
  // like a plugin that is not a regular file (a dangling link, a directory, a FIFO).
  const std::vector<PluginLoadError>& warnings() const { return warnings_; }
  const std::vector<std::string>& loaded() const { return loaded_; }
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
  std::string shipped_dir_ = default_shipped_dir();
  static std::string default_shipped_dir();
};

// Why `file` cannot be a loadable plugin for this machine, judged from its type, size and ELF
// headers without loading it; empty when it looks like a whole shared library.
std::string plugin_file_problem(const std::string& file);

}  // namespace kiln

// Defines the plugin's exported entry.  KILN_PLUGIN_BUILD_ID comes from the header that
// kiln_add_plugin() regenerates at build time (a hash of the plugin's sources, the headers they
// include and its compile flags); the macro is the one place C++ alone cannot do the job.
#if !defined(KILN_PLUGIN_BUILD_ID) && defined(KILN_PLUGIN_BUILD_ID_HEADER)
#include KILN_PLUGIN_BUILD_ID_HEADER
#endif
#ifndef KILN_PLUGIN_BUILD_ID
#define KILN_PLUGIN_BUILD_ID "unknown"
#endif
#define KILN_PLUGIN(NAME, VERSION, REGISTER_FN)                                                   \
  namespace kiln_plugin_detail {                                                                   \
  inline ::kiln::Status register_trampoline(::kiln::Registry& r, const ::kiln::PluginHost& h) {    \
    try {                                                                                          \
      if (h.logger) ::kiln::plugin_logger() = h.logger;                                            \
      return REGISTER_FN(r);                                                                       \
    } catch (const std::exception& e) {                                                            \
      return ::kiln::Status::fail(::kiln::ErrorKind::internal, e.what());                          \
    } catch (...) {                                                                                \
      return ::kiln::Status::fail(::kiln::ErrorKind::internal, "unknown exception");               \
    }                                                                                              \
  }                                                                                                \
  inline ::kiln::PluginInfo entry() {                                                              \
    return ::kiln::PluginInfo{::kiln::kPluginAbiVersion, NAME, VERSION, KILN_PLUGIN_BUILD_ID,      \
                              &register_trampoline};                                               \
  }                                                                                                \
  }                                                                                                \
  BOOST_DLL_ALIAS(kiln_plugin_detail::entry, kiln_plugin_entry)
