// A plugin built against a future kiln: its entry reports the next ABI version, so the loader
// must skip it without calling register.
#include <kiln/plugin.hpp>

namespace {

kiln::Status must_not_be_called(kiln::Registry&) {
  return kiln::Status::fail(kiln::ErrorKind::internal, "register called despite an ABI mismatch");
}

kiln::PluginInfo future_entry() {
  return kiln::PluginInfo{kiln::kPluginAbiVersion + 1, "fixture_abi", "9.0.0", "future", &must_not_be_called};
}

}  // namespace

BOOST_DLL_ALIAS(future_entry, kiln_plugin_entry)
