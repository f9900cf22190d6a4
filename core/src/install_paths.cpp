#include "install_paths.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

// Paths relative to the library directory.  cmake/kiln_install.cmake sets them from the
// GNUInstallDirs layout (e.g. lib/x86_64-linux-gnu -> ../../share/...); these are the defaults
// for the common lib/ + share/ layout.
#ifndef KILN_PLUGIN_REL_DIR
#define KILN_PLUGIN_REL_DIR "kiln/plugins"
#endif
#ifndef KILN_CONFIG_REL_DIR
#define KILN_CONFIG_REL_DIR "../share/kiln/configs"
#endif

namespace kiln::detail {
namespace {

// dladdr needs an address inside libkiln.  A function with internal linkage cannot be
// interposed or get a canonical PLT address in the executable, so its address is always ours.
void anchor() {}

std::filesystem::path library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&anchor), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname) : p;
}

std::string under_library_dir(const char* relative) {
  const std::string dir = library_dir();
  if (dir.empty()) return {};
  return (std::filesystem::path(dir) / relative).lexically_normal().string();
}

}  // namespace

std::string library_dir() {
  static const std::string dir = library_path().parent_path().string();
  return dir;
}

std::string installed_plugin_dir() { return under_library_dir(KILN_PLUGIN_REL_DIR); }

std::string installed_config_dir() { return under_library_dir(KILN_CONFIG_REL_DIR); }

std::string expand_home(const std::string& path) {
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') return path;
  return std::string(home) + path.substr(1);
}

std::optional<std::vector<std::string>> env_path_list(const char* name, const std::string& installed_default) {
  const char* env = std::getenv(name);
  if (env == nullptr) return std::nullopt;
  std::vector<std::string> entries;
  const std::string path = env;
  if (path.empty()) return entries;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = path.find(':', begin);
    std::string entry = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    entry = entry.empty() ? installed_default : expand_home(entry);
    if (!entry.empty() && std::find(entries.begin(), entries.end(), entry) == entries.end()) entries.push_back(entry);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return entries;
}

}  // namespace kiln::detail
