// kiln db show | merge FILE... | prune: inspect the tuning database layers, merge databases
// tuned on other machines into the user file (a key present in both keeps the entry with the
// lower median time, or the newer one with --prefer-newer), and drop stale entries.  `kiln db loo`
// (db_loo.cpp) evaluates dispatch leave-one-out over a device's entries.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "db_loo.hpp"
#include "range_check.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::tuned_later

namespace kiln::cli {
namespace {

// Why an entry cannot be used with the plugins loaded now; empty when it can.
std::string entry_status(const Registry& reg, const std::string& op, const TuningEntry& e) {
  const Variant* v = reg.find_variant(e.variant);
  if (!v) return "variant not loaded";
  if (v->op() != op) return "variant belongs to op '" + v->op() + "'";
  const Source& src = reg.source_of(*v);
  if (!e.plugin_build.empty() && !src.build_id.empty() && e.plugin_build != src.build_id)
    return "stale: tuned with build " + e.plugin_build + ", loaded build " + src.build_id;
  if (!v->space().contains(e.config)) return "config " + e.config.to_string() + " is not in the variant's space";
  return {};
}

std::size_t count_entries(const TuningTable& t) {
  std::size_t n = 0;
  for (const auto& [dev, ops] : t)
    for (const auto& [op, keys] : ops) n += keys.size();
  return n;
}

const char* kUsage =
    "usage: kiln db show [--op OP] [--json]\n"
    "       kiln db merge FILE... [--into PATH] [--prefer-newer] [--json]\n"
    "       kiln db prune [--missing] [--dry-run] [--json]\n"
    "       kiln db loo [--op OP] [--device-key KEY] [--verbose] [--json]";

struct DbCli {
  std::string op, into;
  std::vector<std::string> files;
  bool json = false, prefer_newer = false, dry_run = false, missing = false;
  CLI::App* show = nullptr;
  CLI::App* merge = nullptr;
  CLI::App* prune = nullptr;
  CLI::App* loo = nullptr;
  DbLooOptions loo_options;
};

int run_show(const DbCli& o) {
  auto rt = open_runtime("off", o.json);
  if (!o.op.empty() && !rt->registry().find_op(o.op)) {
    // An op no plugin registers is still shown when the database has entries for it.
    bool stored = false;
    for (const TuningLayer& layer : rt->db().layers())
      for (const auto& [dev, ops] : layer.table) stored |= ops.count(o.op) > 0;
    if (!stored) rt->registry().op(o.op);  // UnknownOpError: "did you mean ...", exit 2
  }
  Json layers = Json::array();
  for (const TuningLayer& layer : rt->db().layers()) {
    Table t({"device", "op", "problem", "variant", "config", "median", "throughput", "tuned at", "status"},
            {Align::left, Align::left, Align::left, Align::left, Align::left, Align::right, Align::right, Align::left,
             Align::left});
    Json entries = Json::array();
    for (const auto& [dev, ops] : layer.table)
      for (const auto& [op, keys] : ops) {
        if (!o.op.empty() && op != o.op) continue;
        for (const auto& [key, e] : keys) {
          const std::string status = entry_status(rt->registry(), op, e);
          // Alternatives timed with another build of their plugin: dispatch does not weigh them,
          // and a resumed tune times the entry again.
          const auto stale_alternatives = std::count_if(
              e.alternatives.begin(), e.alternatives.end(),
              [&](const TunedAlternative& a) { return !rt->dispatcher().alternative_current(a); });
          std::string shown = status.empty() ? "ok" : status;
          if (stale_alternatives > 0)
            shown += " (" + std::to_string(stale_alternatives) + " of " + std::to_string(e.alternatives.size()) +
                     " alternatives stale)";
          t.add({dev, op, key, e.variant, e.config.to_string(), fmt_us(e.median_us),
                 fmt_throughput(e.throughput, e.throughput_unit), e.tuned_at, shown});
          entries.push(Json::object()
                           .set("device", dev)
                           .set("op", op)
                           .set("problem", key)
                           .set("variant", e.variant)
                           .set("config", config_json(e.config))
                           .set("median_us", e.median_us)
                           .set("mad_us", e.mad_us)
                           .set("samples", e.samples)
                           .set("throughput", e.throughput)
                           .set("throughput_unit", e.throughput_unit)
                           .set("plugin", e.plugin_name)
                           .set("plugin_version", e.plugin_version)
                           .set("build", e.plugin_build)
                           .set("tuned_at", e.tuned_at)
                           .set("status", status.empty() ? "ok" : status)
                           .set("stale_alternatives", static_cast<std::int64_t>(stale_alternatives)));
        }
      }
    if (o.json) {
      layers.push(Json::object()
                      .set("path", layer.path)
                      .set("kind", layer.writable ? "user" : "shipped")
                      .set("entries", std::move(entries)));
    } else {
      std::cout << (layer.writable ? "user" : "shipped") << " layer " << detail::control_escaped(layer.path) << ": "
                << count_entries(layer.table) << " entries\n";
      if (!t.empty()) t.print(std::cout, "  ");
    }
  }
  if (o.json) {
    Json errors = Json::array();
    for (const auto& e : rt->db().errors()) errors.push(e);
    Json warnings = Json::array();
    for (const auto& w : rt->db().warnings()) warnings.push(w);
    std::cout << json_document()
                     .set("user_path", rt->db().user_path())
                     .set("layers", std::move(layers))
                     .set("errors", std::move(errors))
                     .set("warnings", std::move(warnings))
                     .dump()
              << "\n";
  } else {
    if (rt->db().layers().empty()) std::cout << "no tuning database layers (user file: " << detail::control_escaped(rt->db().user_path()) << ")\n";
    bool user_layer = false;
    for (const TuningLayer& l : rt->db().layers()) user_layer |= l.writable;
    // The runtime logged the reason when it opened the database, as a warning (op() goes on
    // without the file), so "the error above" named nothing the user could find.
    if (!user_layer && !rt->db().user_path().empty())
      std::cout << "user file " << detail::control_escaped(rt->db().user_path()) << " is not readable (the reason is on stderr above)\n";
  }
  return rt->db().errors().empty() ? kExitOk : kExitFailed;
}

// --into names a file the user chose: a typo in its directory made a new directory tree (the
// merge "succeeded" into a file nobody reads), and a symbolic link to nothing had the file created
// at the link's target, a path the user never named.  Both are refused; an existing file or link
// is judged by the database's own rules (resolve_db_path: owner of a link, a directory, ...).
void check_into(const std::string& into) {
  const std::string shown = "bad --into '" + detail::control_escaped(into) + "': ";
  struct stat st {};
  if (::lstat(into.c_str(), &st) == 0) {
    struct stat target {};
    if (S_ISLNK(st.st_mode) && ::stat(into.c_str(), &target) != 0) {
      std::error_code ec;
      const std::string link = std::filesystem::read_symlink(into, ec).string();
      throw UsageError(shown + "it is a symbolic link to " +
                       (ec ? std::string("a file") : "'" + detail::control_escaped(link) + "'") +
                       " that does not exist; kiln db merge does not follow a dangling link (expected an existing "
                       "database file, or a new file in an existing directory)");
    }
    return;
  }
  if (errno != ENOENT) throw UsageError(shown + "cannot inspect it: " + std::strerror(errno));
  std::string dir = std::filesystem::path(into).parent_path().string();
  if (dir.empty()) dir = ".";
  struct stat d {};
  if (::stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode))
    throw UsageError(shown + "directory '" + detail::control_escaped(dir) +
                     "' does not exist; kiln db merge does not create directories (expected a database file in an "
                     "existing directory: create it first)");
}

int run_merge(const DbCli& o) {
  // Read every input first: a bad file stops the merge before anything is written; a bad entry
  // is skipped with a warning naming it.  Reads are capped (`kiln db merge /dev/zero` ends).
  std::vector<TuningTable> inputs;
  std::vector<std::string> skipped;
  for (const std::string& f : o.files) {
    std::vector<std::string> warnings;
    inputs.push_back(TuningDb::read_file(f, &warnings));
    // A file with no entries (an empty file, the wrong file, a database whose every entry was
    // skipped) merged as "0 added" without a word about which input gave nothing.
    const bool said = std::any_of(warnings.begin(), warnings.end(),
                                  [](const std::string& w) { return w.find("holds no entries") != std::string::npos; });
    for (std::string& w : warnings) {
      std::cerr << "kiln: warning: " << w << "\n";
      // A comments-only file is named, but no entry of it was skipped: it counted as one.
      if (w.find("holds no entries") == std::string::npos) skipped.push_back(std::move(w));
    }
    if (count_entries(inputs.back()) == 0 && !said)
      std::cerr << "kiln: warning: '" << detail::control_escaped(f) << "' holds no entries; nothing is merged from it\n";
  }
  // --into '' (an unset variable in a script) would otherwise merge into the user's own database.
  if (o.merge->count("--into") > 0 && o.into.empty())
    throw UsageError("bad --into '': expected a database file (leave --into out for the user database)");
  if (!o.into.empty()) check_into(o.into);
  const std::string target = o.into.empty() ? TuningDb::default_user_path() : o.into;
  if (target.empty()) throw UsageError("no user database file (set KILN_CACHE_DIR or HOME, or give --into PATH)");
  TuningDb db({}, target);
  if (!db.errors().empty()) throw TuningDbError(db.errors().front() + " (not merging into it)");
  // Skipped entries are lost by the rewrite, so their warnings say so; the lock-timeout and
  // comments-only messages are about something else (the latter already says what the rewrite does).
  for (const std::string& w : db.warnings()) {
    const bool about_entries = w.rfind("KILN_DB_LOCK_TIMEOUT", 0) != 0 && w.find("does not keep them") == std::string::npos;
    std::cerr << "kiln: warning: " << w << (about_entries ? " (dropped when it is rewritten)" : "") << "\n";
  }
  // Messages of the rewrite itself: where the file as it was is kept (<file>.bak) when the merge
  // leaves out what could not be read.  Unset, they went nowhere and the copy went unmentioned.
  db.set_reporter([](const std::string& message, bool) { std::cerr << "kiln: warning: " << message << "\n"; });
  std::size_t changed = 0, added = 0, replaced = 0, kept = 0, total = 0;
  Json conflicts = Json::array();
  db.update([&](TuningTable& table) {
    for (const TuningTable& in : inputs) {
      for (const auto& [dev, ops] : in)
        for (const auto& [op, keys] : ops)
          for (const auto& [key, e] : keys) {
            const TuningEntry* old = nullptr;
            auto d = table.find(dev);
            if (d != table.end()) {
              auto x = d->second.find(op);
              if (x != d->second.end()) {
                auto k = x->second.find(key);
                if (k != x->second.end()) old = &k->second;
              }
            }
            if (!old) {
              ++added;
              continue;
            }
            if (*old == e) continue;
            const bool take = o.prefer_newer ? detail::tuned_later(e.tuned_at, old->tuned_at) : e.median_us < old->median_us;
            (take ? replaced : kept)++;
            conflicts.push(Json::object()
                               .set("device", dev)
                               .set("op", op)
                               .set("problem", key)
                               .set("kept", take ? e.variant + " [" + e.config.to_string() + "]"
                                                 : old->variant + " [" + old->config.to_string() + "]")
                               .set("kept_median_us", take ? e.median_us : old->median_us)
                               .set("dropped", take ? old->variant + " [" + old->config.to_string() + "]"
                                                    : e.variant + " [" + e.config.to_string() + "]")
                               .set("dropped_median_us", take ? old->median_us : e.median_us));
          }
      changed += merge_tables(table, in, o.prefer_newer);
    }
    total = count_entries(table);
  });
  if (o.json) {
    std::cout << json_document()
                     .set("into", target)
                     .set("files", o.files.size())
                     .set("added", added)
                     .set("replaced", replaced)
                     .set("kept", kept)
                     .set("changed", changed)
                     .set("entries", total)
                     .set("rule", o.prefer_newer ? "newer tuned_at wins" : "lower median_us wins")
                     .set("conflicts", std::move(conflicts))
                     .set("skipped", skipped.size())
                     .dump()
              << "\n";
  } else {
    std::cout << "merged " << o.files.size() << " file(s) into " << detail::control_escaped(target) << ": " << added << " added, " << replaced
              << " replaced, " << kept << " kept on conflict (" << (o.prefer_newer ? "newer wins" : "lower median wins")
              << "); " << total << " entries now\n";
  }
  return kExitOk;
}

int run_prune(const DbCli& o) {
  auto rt = open_runtime("off", o.json);
  if (rt->db().user_path().empty()) throw UsageError("no user database file (set KILN_CACHE_DIR or HOME)");
  if (o.missing && rt->registry().all_variants().empty())
    throw UsageError("--missing with no plugins loaded would drop every entry; check KILN_PLUGIN_PATH");
  std::vector<std::pair<std::string, std::string>> dropped;  // (what, why)
  auto drop = [&](const std::string& dev, const std::string& op, const std::string& key, const TuningEntry& e) {
    const std::string status = entry_status(rt->registry(), op, e);
    if (status.empty()) return false;
    if (status == "variant not loaded" && !o.missing) return false;
    dropped.emplace_back(dev + " " + op + " " + key + " " + e.variant, status);
    return true;
  };
  if (o.dry_run) {
    for (const TuningLayer& l : rt->db().layers())
      if (l.writable)
        for (const auto& [dev, ops] : l.table)
          for (const auto& [op, keys] : ops)
            for (const auto& [key, e] : keys) drop(dev, op, key, e);
  } else {
    rt->db().prune(drop);
  }
  if (o.json) {
    Json arr = Json::array();
    for (const auto& [what, why] : dropped) arr.push(Json::object().set("entry", what).set("why", why));
    std::cout << json_document()
                     .set("user_path", rt->db().user_path())
                     .set("dry_run", o.dry_run)
                     .set("dropped", std::move(arr))
                     .dump()
              << "\n";
  } else {
    for (const auto& [what, why] : dropped) std::cout << (o.dry_run ? "would drop " : "dropped ") << what << ": " << why << "\n";
    // With --missing the list holds entries of variants not loaded too, which are not stale.
    std::cout << dropped.size() << (o.missing ? " stale or unloaded entr" : " stale entr") << (dropped.size() == 1 ? "y" : "ies")
              << (o.dry_run ? " would be" : "")
              << " dropped from " << detail::control_escaped(rt->db().user_path())
              << (o.missing ? "" : " (entries of variants that are not loaded are kept; --missing drops them)") << "\n";
  }
  return kExitOk;
}

}  // namespace

Command make_db_command(CLI::App& parent) {
  auto o = std::make_shared<DbCli>();
  Command c;
  c.app = parent.add_subcommand("db", "Inspect, merge and prune the tuning database");
  c.app->require_subcommand(1);
  o->show = c.app->add_subcommand("show", "List the layers and their entries with their status");
  o->show->add_option("--op", o->op, "Only this op")->check(not_empty("an op name (leave --op out for every op)", false));
  o->show->add_flag("--json", o->json, "Print JSON");
  o->merge = c.app->add_subcommand("merge", "Merge tuning databases from other machines into the user file");
  o->merge->add_option("FILE", o->files, "Database files to merge (at least one)")->required()->check(CLI::ExistingFile);
  o->merge->add_option("--into", o->into, "Target file (default: the user database)");
  o->merge->add_flag("--prefer-newer", o->prefer_newer, "On a conflict keep the newer entry, not the faster one");
  o->merge->add_flag("--json", o->json, "Print JSON");
  o->prune = c.app->add_subcommand("prune", "Drop stale entries (changed plugin build, invalid config) from the user file");
  o->prune->add_flag("--missing", o->missing, "Also drop entries whose variant is not loaded");
  o->prune->add_flag("--dry-run", o->dry_run, "Only list what would be dropped");
  o->prune->add_flag("--json", o->json, "Print JSON");
  o->loo = c.app->add_subcommand("loo", "Leave-one-out: what dispatch chooses for each tuned entry without it");
  o->loo->add_option("--op", o->loo_options.op, "Only this op")->check(not_empty("an op name (leave --op out for every op)", false));
  o->loo->add_option("--device-key", o->loo_options.device_key,
                     "Database device key (default: this GPU's, else the first GPU key in the database)")
      ->check(not_empty("a database device key NAME|sm_XY|Nsm"));
  o->loo->add_flag("--verbose", o->loo_options.verbose, "List the entries where another variant is chosen");
  o->loo->add_flag("--json", o->loo_options.json, "Print JSON");
  c.usage = kUsage;
  c.run = [o] {
    if (o->loo->parsed()) return run_db_loo(o->loo_options);
    if (o->show->parsed()) return run_show(*o);
    if (o->merge->parsed()) return run_merge(*o);
    if (o->prune->parsed()) return run_prune(*o);
    throw UsageError("expected show, merge, prune or loo");
  };
  return c;
}

}  // namespace kiln::cli
