// Where kiln's own files are, found at run time from the location of libkiln.so, so an install
// can be moved (and the build tree, laid out the same way, works uninstalled):
//
//   kiln::detail::library_dir();           // "/opt/kiln/lib"
//   kiln::detail::installed_plugin_dir();  // "/opt/kiln/lib/kiln/plugins"
//   kiln::detail::installed_config_dir();  // "/opt/kiln/share/kiln/configs"
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

// The directory holding libkiln.so (symlinks resolved); empty if it cannot be determined.
std::string library_dir();
// <libdir>/kiln/plugins: the plugins shipped with kiln.
std::string installed_plugin_dir();
// <libdir>/../share/kiln/configs (following the build's GNUInstallDirs layout): shipped tuning
// databases and tuning plans.
std::string installed_config_dir();

// A ':'-separated path variable, read by one rule for KILN_PLUGIN_PATH and KILN_CONFIG_PATH:
// unset -> nothing (the caller uses its installed default); set to "" -> an empty list (none);
// otherwise its entries in order, each empty entry ("/mine:", "a::b") replaced by
// `installed_default` as in MANPATH, duplicates dropped.
// Entries starting with `~` are expanded by expand_home().
std::optional<std::vector<std::string>> env_path_list(const char* name, const std::string& installed_default);
// A path from the environment with a leading "~" or "~/" replaced by $HOME (when HOME is an
// absolute path): no shell expands it in a Dockerfile ENV, a systemd unit or a quoted word, and
// kiln would otherwise make a directory named "~" in the working directory.  "~user" is left as
// it is.
std::string expand_home(const std::string& path);

}  // namespace kiln::detail
