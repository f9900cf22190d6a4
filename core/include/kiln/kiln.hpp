// kiln: a plugin-based GPU kernel registry with an autotuner.  The umbrella header for programs
// that use ops: kiln's own types only (no spdlog, fmt, Boost or yaml-cpp, no CUDA header).  Plugin
// code includes kiln/plugin.hpp instead, the tuner's API is under kiln/tuner/.
//
//   #include <kiln/kiln.hpp>
//   kiln::Runtime rt;
//   kiln::Device dev = rt.default_device();      // CUDA device 0, else the host
//   std::size_t m = 1000, n = 300;
//   auto a = kiln::Buffer::alloc(dev, kiln::f32, {m, n});
//   auto b = kiln::Buffer::alloc(dev, kiln::f32, {m, n});
//   auto c = kiln::Buffer::alloc(dev, kiln::f32, {m, n});
//   rt.op("add")({a, b, c});                     // on the default stream
//
// A whole program, with the caller's own memory: README.md.
#pragma once
#include "kiln/args.hpp"
#include "kiln/buffer.hpp"
#include "kiln/device.hpp"
#include "kiln/dispatcher.hpp"
#include "kiln/dtype.hpp"
#include "kiln/errors.hpp"
#include "kiln/half.hpp"
#include "kiln/log.hpp"
#include "kiln/op_schema.hpp"
#include "kiln/param_space.hpp"
#include "kiln/plugin_loader.hpp"
#include "kiln/problem.hpp"
#include "kiln/registry.hpp"
#include "kiln/runtime.hpp"
#include "kiln/stream.hpp"
#include "kiln/tensor_ref.hpp"
#include "kiln/tuning_db.hpp"
#include "kiln/variant.hpp"
#include "kiln/version.hpp"
#include "kiln/view.hpp"

// A plugin's entry file needs kiln/plugin.hpp, which kiln.hpp does not include: say so, rather
// than fail on an unknown name (plugin.hpp replaces this with the real macro).
#ifndef KILN_PLUGIN
#define KILN_PLUGIN(...) \
  static_assert(false, "KILN_PLUGIN is declared in <kiln/plugin.hpp> (the plugin-author header): include it")
#endif
