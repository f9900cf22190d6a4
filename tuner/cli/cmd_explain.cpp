// kiln explain <op> --shape ...: what op() would run for a problem and which evidence chose it —
// the exact entry, a tuned neighbour and its distance, a model estimate, or the vendor / priority
// fallback — with the database file, device fallback level and problem key that hit, and what was
// passed over, each with its reason.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped
#include "problem_flags.hpp"
#include "range_check.hpp"
#include "db_loo.hpp"
#include "json.hpp"
#include "json_document.hpp"

namespace kiln::cli {

Command make_explain_command(CLI::App& parent) {
  struct Opts {
    std::string op, shape, dtype, device, device_key;
    int align = 16;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand("explain", "Show which variant and config op() would run for a problem, and why");
  const ProblemFlags flags = add_problem_flags(c.app, "Op", o->op, o->shape, o->dtype, o->device);
  flags.op->required();
  auto* device_opt = flags.device;
  c.app->add_option("--device-key", o->device_key,
                    "Explain for the GPU of this database key (NAME|sm_XY|Nsm, as `kiln db show` lists), here or "
                    "not: its entries are trusted as `kiln db loo` trusts them")
      ->excludes(device_opt)
      ->check(not_empty("a database device key NAME|sm_XY|Nsm"));
  c.app->add_option("--align", o->align, "Alignment of the arguments in bytes: 16 (default), 8, 4, 2, 1")
      // On the text, before the conversion to int: CLI11's IsMember said only "--align:
      // 99999999999999999999" for a value past int.
      ->check(CLI::Validator(
          [](std::string& input) -> std::string {
            for (const char* ok : {"1", "2", "4", "8", "16"})
              if (input == ok) return {};
            return "'" + input + "' is not one of 1, 2, 4, 8, 16 (bytes)";
          },
          "BYTES in {1,2,4,8,16}"));
  c.app->add_flag("--json", o->json, "Print JSON");
  c.usage = "usage: kiln explain <op> --shape SHAPE [--dtype T] [--device D | --device-key KEY] [--align BYTES] [--json]";
  c.run = [o] {
    auto rt = open_runtime("off", o->json);
    // --device-key: the decision for another GPU (what its users' op() would run), from the
    // database alone; entries whose variants are not loaded here are named, not run.
    DeviceInfo keyed;
    const bool by_key = !o->device_key.empty();
    if (by_key && !device_from_key(o->device_key, keyed))
      throw UsageError("--device-key '" + detail::control_escaped(o->device_key) +
                       "' is not NAME|sm_XY|Nsm (kiln db show lists the keys)");
    const Device dev = by_key ? keyed.device : parse_device(o->device);
    Problem p = make_problem(*rt, o->op, o->dtype, o->shape, dev);
    // op() refuses a pointer off its element size: such a problem never reaches dispatch.
    if (o->align < static_cast<int>(dtype_size(p.dtype)))
      throw UsageError("--align " + std::to_string(o->align) + ": op() refuses " + std::string(dtype_name(p.dtype)) +
                       " arguments that are not " + std::to_string(dtype_size(p.dtype)) + "-byte aligned");
    p.align_bytes = o->align;
    const DeviceInfo& info = by_key ? keyed : device_info(dev);
    const Decision d = by_key ? rt->dispatcher().decide_uncached(p, keyed, Dispatcher::LeaveOneOut{"", true}) : rt->explain(p);
    const std::string chosen = decided_variant(d);
    std::vector<std::string> layers;
    for (const TuningLayer& l : rt->db().layers()) layers.push_back(l.path + (l.writable ? " (user)" : " (shipped)"));
    if (o->json) {
      Json j = json_document();
      j.set("op", o->op).set("problem", p.key()).set("modes", p.schema->mode_key(p)).set("device", dev.to_string());
      j.set("device_key", info.fingerprint()).set("align_bytes", p.align_bytes);
      j.set("variant", chosen).set("config", config_json(d.config));
      if (by_key) j.set("variant_loaded", d.variant != nullptr);
      j.set("source", decision_source_name(d.from)).set("evidence", evidence_name(d.evidence));
      if (d.evidence == Decision::Evidence::neighbour || d.evidence == Decision::Evidence::far_neighbour ||
          d.evidence == Decision::Evidence::neighbour_variant || d.evidence == Decision::Evidence::stale_neighbours ||
          d.evidence == Decision::Evidence::sibling_neighbour)
        j.set("distance", d.distance);
      if (!d.config_note.empty()) j.set("config_note", d.config_note);
      if (d.evidence == Decision::Evidence::model) j.set("predicted_us", d.predicted_us);
      if (!d.estimates.empty()) {
        Json est = Json::array();
        for (const auto& [name, us] : d.estimates) est.push(Json::object().set("variant", name).set("predicted_us", us));
        j.set("estimates", std::move(est));
      }
      if (!d.weighed.empty()) {
        Json w = Json::array();
        for (const auto& [name, ratio] : d.weighed) w.push(Json::object().set("variant", name).set("expected_ratio", ratio));
        j.set("weighed_neighbours", d.weighed_neighbours).set("weighed", std::move(w));
      }
      if (d.hit) {
        j.set("hit", Json::object()
                         .set("file", d.hit->layer_path)
                         .set("device_key", d.hit->device_key)
                         .set("fallback_level", fallback_level_name(d.hit->level))
                         .set("problem_key", d.hit->problem_key)
                         .set("exact_problem", d.hit->exact_problem)
                         .set("median_us", d.hit->entry.median_us)
                         .set("mad_us", d.hit->entry.mad_us)
                         .set("samples", d.hit->entry.samples)
                         .set("tuned_at", d.hit->entry.tuned_at)
                         .set("plugin_build", d.hit->entry.plugin_build)
                         .set("alternative_of", d.hit->alternative_of.empty() ? Json() : Json(d.hit->alternative_of)));
      }
      Json rejected = Json::array();
      for (const auto& [what, why] : d.rejected) rejected.push(Json::object().set("what", what).set("why", why));
      j.set("rejected", std::move(rejected));
      Json l = Json::array();
      for (const auto& s : layers) l.push(s);
      j.set("database_layers", std::move(l));
      if (d.workspace_bytes) j.set("workspace_bytes", d.workspace_bytes);
      std::cout << j.dump() << "\n";
      return chosen.empty() ? kExitFailed : kExitOk;
    }
    std::cout << o->op << " " << p.key() << " on " << dev.to_string() << " (" << info.fingerprint() << "), "
              << p.align_bytes << "-byte aligned\n";
    if (chosen.empty()) {
      std::cout << "no variant supports this problem:\n";
      for (const auto& [what, why] : d.rejected) std::cout << "  " << what << ": " << why << "\n";
      if (d.rejected.empty()) std::cout << "  (no variants are registered for this op)\n";
      return kExitFailed;
    }
    std::cout << d.explain();
    if (!d.hit) {
      std::cout << "database layers searched (modes " << p.schema->mode_key(p) << "):";
      if (layers.empty()) std::cout << " none";
      std::cout << "\n";
      for (const auto& s : layers) std::cout << "  " << s << "\n";
    }
    return kExitOk;
  };
  return c;
}

}  // namespace kiln::cli
