// kiln list [op] [--all]: one line per op; with an op (or --all), its variants and each variant's
// parameters with their values.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "range_check.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "table.hpp"
#include "terminal.hpp"

namespace kiln::cli {
namespace {

// The device a variant's default config is shown for: the first of its kind, else a stand-in.
DeviceInfo device_for(DeviceKind kind) {
  for (const DeviceInfo& d : enumerate_devices())
    if (d.device.kind == kind) return d;
  DeviceInfo stand_in;
  stand_in.device = Device::cuda(0);
  stand_in.name = "(no CUDA device)";
  return stand_in;
}

// The dtypes as a list; [] for "any".
Json dtypes_json(const std::vector<DType>& dtypes) {
  Json j = Json::array();
  for (DType t : dtypes) j.push(std::string(dtype_name(t)));
  return j;
}

std::string dtypes_text(const std::vector<DType>& dtypes) {
  if (dtypes.empty()) return "any";
  std::string s;
  for (DType t : dtypes) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

std::string default_config_text(const Variant& v) {
  try {
    return v.default_config(device_for(v.device_kind())).to_string();
  } catch (const std::exception& e) {
    return std::string("(error: ") + e.what() + ")";
  }
}

std::string dims_text(const OpSchema& s) {
  std::string d;
  for (const auto& name : s.dim_names) {
    d += (d.empty() ? "" : ", ") + name;
    auto it = s.dim_defaults.find(name);
    if (it != s.dim_defaults.end()) d += " (default " + std::to_string(it->second) + ")";
  }
  return d;
}

Json variant_json(const Runtime& rt, const Variant& v) {
  Json params = Json::array();
  for (const auto& p : v.space().params()) {
    Json values = Json::array();
    for (int x : p.values) values.push(x);
    params.push(Json::object().set("name", p.name).set("values", std::move(values)));
  }
  Json constraints = Json::array();
  for (const auto& k : v.space().constraints()) constraints.push(k.name);
  const Source& src = rt.registry().source_of(v);
  return Json::object()
      .set("name", v.name())
      .set("device_kind", device_kind_name(v.device_kind()))
      .set("dtypes", dtypes_json(v.dtypes()))
      .set("priority", v.priority())
      .set("reference", v.desc().reference)
      .set("vendor", v.desc().vendor)
      .set("summary", v.desc().summary)
      .set("plugin", src.plugin)
      .set("plugin_version", src.version)
      .set("build", src.build_id)
      .set("parameters", std::move(params))
      .set("constraints", std::move(constraints))
      .set("product_size", static_cast<long long>(v.space().count()))
      .set("default_config", default_config_text(v));
}

}  // namespace

Command make_list_command(CLI::App& parent) {
  struct Opts {
    std::string op;
    bool json = false;
    bool all = false;
  };
  auto o = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("list", "List ops, their variants and tuning parameters");
  c.app->add_option("op", o->op, "Only this op")->check(not_empty("an op name (kiln list lists them)", false));
  c.app->add_flag("--all", o->all, "Show every op's variants and parameters, not one line per op");
  c.app->add_flag("--json", o->json, "Print JSON");
  c.usage = "usage: kiln list [op] [--all] [--wide] [--json]";
  c.run = [o] {
    auto rt = open_runtime("off", o->json);
    std::vector<std::string> ops = rt->registry().op_names();
    if (!o->op.empty()) {
      rt->registry().op(o->op);  // UnknownOpError listing the ops
      ops = {o->op};
    }
    if (o->json) {
      Json out = Json::array();
      for (const std::string& name : ops) {
        const OpSchema& s = rt->registry().op(name);
        Json variants = Json::array();
        for (const Variant* v : rt->registry().variants(name)) variants.push(variant_json(*rt, *v));
        out.push(Json::object()
                     .set("op", name)
                     .set("signature", s.signature())
                     .set("summary", s.summary)
                     .set("dims", dims_text(s))
                     .set("dtypes", dtypes_json(s.dtypes))
                     .set("work_unit", s.work_unit == WorkUnit::flop ? "flop" : "byte")
                     .set("plugin", rt->registry().source_of(s).plugin)
                     .set("variants", std::move(variants)));
      }
      std::cout << json_document().set("ops", std::move(out)).dump() << "\n";
      return kExitOk;
    }
    if (ops.empty()) {
      // "set KILN_PLUGIN_PATH" was the advice also when it was set and its files failed to load.
      const std::string failed = skipped_plugins_note();
      std::cout << (failed.empty() ? "no ops registered (no plugin was loaded; set KILN_PLUGIN_PATH to the plugin directories)"
                                   : "no ops registered: no plugin was loaded" + failed)
                << "\n";
      return kExitOk;
    }
    if (o->op.empty() && !o->all) {
      Table t({"op", "variants", "dtypes", "plugin", "summary"},
              {Align::left, Align::right, Align::left, Align::left, Align::left});
      for (const std::string& name : ops) {
        const OpSchema& s = rt->registry().op(name);
        t.add({name, std::to_string(rt->registry().variants(name).size()), dtypes_text(s.dtypes),
               rt->registry().source_of(s).plugin, s.summary});
      }
      t.print(std::cout);
      std::cout << "\nkiln list <op> shows an op's variants and parameters; --all shows every op's.\n";
      for (const std::string& orphan : rt->registry().orphan_variants())
        std::cout << "variant " << orphan << " is registered for an op without a schema (unusable)\n";
      return kExitOk;
    }
    for (const std::string& name : ops) {
      const OpSchema& s = rt->registry().op(name);
      const std::size_t columns = output_columns();
      std::cout << s.signature() << "\n";
      if (!s.summary.empty()) std::cout << wrap_text(s.summary, "  ", columns);
      std::cout << wrap_text("dims: " + dims_text(s) + "; dtypes: " + dtypes_text(s.dtypes) + "; work counted in " +
                                 (s.work_unit == WorkUnit::flop ? "FLOP" : "bytes"),
                             "  ", columns)
                << wrap_text("from " + rt->registry().source_of(s).to_string(), "  ", columns);
      const auto variants = rt->registry().variants(name);
      if (variants.empty()) {
        std::cout << "  (no variants)\n\n";
        continue;
      }
      Table t({"variant", "runs on", "dtypes", "prio", "role", "configs", "default config", "summary"},
              {Align::left, Align::left, Align::left, Align::right, Align::left, Align::right, Align::left, Align::left});
      for (const Variant* v : variants) {
        std::string role = v->desc().reference ? "reference" : (v->desc().vendor ? "vendor" : "");
        t.add({v->name(), device_kind_name(v->device_kind()), dtypes_text(v->dtypes()), std::to_string(v->priority()),
               role, std::to_string(v->space().count()), default_config_text(*v), v->desc().summary});
      }
      t.set_flexible({7, 6, 4});  // the summary first, then the default config, then the role
      t.print(std::cout, "  ");
      bool any_params = false;
      for (const Variant* v : variants) {
        if (v->space().empty()) continue;
        if (!any_params) std::cout << "  parameters:\n";
        any_params = true;
        std::cout << wrap_text(v->name() + ": " + v->space().to_string(), "    ", output_columns());
      }
      std::cout << "\n";
    }
    for (const std::string& orphan : rt->registry().orphan_variants())
      std::cout << "variant " << orphan << " is registered for an op without a schema (unusable)\n";
    return kExitOk;
  };
  return c;
}

}  // namespace kiln::cli
