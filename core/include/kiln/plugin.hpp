// The plugin-author header: everything a plugin's sources need (the core types of kiln.hpp,
// kiln/log.hpp for messages, Registry, Variant, OpSchema) and the entry a plugin library exports.
// Programs that only use ops include kiln/kiln.hpp, which does not include this header (nor
// Boost.DLL).  A plugin's entry file:
//
//   #include <kiln/plugin.hpp>
//   kiln::Status register_my_family(kiln::Registry& r) noexcept;   // adds schemas and variants
//   KILN_PLUGIN("my_family", "0.1.0", register_my_family)
//
// built with kiln_add_plugin(my_family SOURCES ... ENTRY plugin_entry.cpp)
// (cmake/kiln_add_plugin.cmake), which also defines the build id.  The loader (kiln::PluginLoader,
// kiln/plugin_loader.hpp) checks the ABI version, calls register into a staging registry and
// merges it (a name another plugin already holds is refused alone, with an error).  CUDA sources
// add kiln/cuda_status.hpp.
#pragma once
#include <exception>

#include "kiln/kiln.hpp"
#include "kiln/log.hpp"
#include "kiln/plugin_loader.hpp"

// Boost.DLL's alias with std::filesystem paths (nothing to link).  Defined here, for the plugin's
// own sources only: kiln's package does not put it on its consumers' command lines.
#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS 1
#endif
#include <boost/dll/alias.hpp>

namespace kiln {

// Bumped whenever a type crossing the plugin boundary (Registry, Variant, OpSchema, Args, ...)
// changes layout or meaning.
// 3: TensorRef column and batch strides, rank-3 Shape, Problem::kMaxDims 8,
//    OpSchema::strided_views and mode_dims, Variant::prepare.
// 4: register takes the Registry only (plugins log through kiln/log.hpp, not a logger handed
//    over by the host).
// 5: TensorRef::read_only (in padding that a plugin built before it left uninitialised).
inline constexpr int kPluginAbiVersion = 5;

struct PluginInfo {
  int abi_version = 0;
  const char* name = "";
  const char* version = "";
  const char* build_id = "";
  // Registers the plugin's schemas and variants.  Must not throw; failures come back as Status.
  Status (*register_fn)(Registry& registry) = nullptr;
};

using PluginEntryFn = PluginInfo();

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
#undef KILN_PLUGIN  // kiln.hpp's placeholder, which only says to include this header
#define KILN_PLUGIN(NAME, VERSION, REGISTER_FN)                                                   \
  namespace kiln_plugin_detail {                                                                   \
  inline ::kiln::Status register_trampoline(::kiln::Registry& r) {                                 \
    try {                                                                                          \
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
