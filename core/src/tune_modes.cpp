// Finds the tuner for KILN_TUNE=lazy|record (see tune_modes.hpp): in the process first, else
// libkiln_tuner.so next to libkiln.so.  The library, once loaded, stays loaded (the handlers it
// installs live as long as the Runtimes that hold them).
#include "tune_modes.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "install_paths.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "logger.hpp"

#ifndef KILN_TUNER_LIBRARY_FILE
#define KILN_TUNER_LIBRARY_FILE "libkiln_tuner.so"
#endif

namespace kiln::detail {
namespace {

using InstallFn = void (*)(Runtime&, const char*);
constexpr const char* kEntry = "kiln_tuner_install_tune_mode";

struct TunerEntry {
  InstallFn install = nullptr;
  std::string why_missing;
};

const TunerEntry& tuner_entry() {
  static const TunerEntry entry = [] {
    TunerEntry e;
    if (void* in_process = dlsym(RTLD_DEFAULT, kEntry)) {
      e.install = reinterpret_cast<InstallFn>(in_process);
      return e;
    }
    const std::string dir = library_dir();
    const std::string file = (std::filesystem::path(dir) / KILN_TUNER_LIBRARY_FILE).string();
    void* handle = dir.empty() ? nullptr : dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      e.why_missing = "cannot load the tuner library " + file + (error ? std::string(": ") + error : std::string());
      return e;
    }
    if (void* symbol = dlsym(handle, kEntry)) e.install = reinterpret_cast<InstallFn>(symbol);
    else e.why_missing = file + " has no " + kEntry;
    return e;
  }();
  return entry;
}

}  // namespace

bool install_tune_mode(Runtime& rt, const std::string& mode, bool quiet) {
  const auto& names = tune_mode_names();
  if (std::find(names.begin(), names.end(), mode) == names.end())
    throw ArgumentError("KILN_TUNE='" + mode + "': expected off, race, lazy or record");
  if (mode == "off") return true;
  const TunerEntry& entry = tuner_entry();
  if (entry.install == nullptr) {
    if (quiet) logger()->debug("KILN_TUNE={}: {}; op() will not tune", mode, entry.why_missing);
    else logger()->warn("KILN_TUNE={}: {}; op() will not tune", mode, entry.why_missing);
    return false;
  }
  entry.install(rt, mode.c_str());
  return true;
}

}  // namespace kiln::detail
