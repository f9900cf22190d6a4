// kiln: the command-line tool.  Subcommands live one per file (cmd_*.cpp); this file parses
// the command line and turns errors into messages with the usage line and an exit code:
// 0 ok, 1 something failed (a wrong result, nothing tuned), 2 bad input (flags, op, shape).
// Under --json an error is also a JSON document on stdout ({"error": {"kind", "message"}}).
#include <cstring>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json_document.hpp"
#include "terminal.hpp"
#include "typos.hpp"

namespace {

const char* kTopUsage =
    "usage: kiln <command> [options]\n"
    "commands: devices, list, tune, bench, verify, explain, db, demo, plugins (kiln <command> --help for each)";

bool g_json = false;  // --json anywhere on the command line

// The message on stderr, and under --json the same as a document on stdout.
int report(const std::string& name, const std::string& kind, const std::string& message, const std::string& usage,
           int code) {
  std::cerr << name << ": " << (kind == "internal" ? "internal error: " : "error: ") << message << "\n";
  if (!usage.empty()) std::cerr << usage << "\n";
  if (g_json) std::cout << kiln::cli::error_document(kind, message).dump() << "\n";
  return code;
}

int run_guarded(const kiln::cli::Command& cmd) {
  const std::string name = "kiln " + cmd.app->get_name();
  try {
    return cmd.run();
  } catch (const kiln::cli::UsageError& e) {
    return report(name, "usage", e.what(), cmd.usage, kiln::cli::kExitUsage);
  } catch (const kiln::UnknownOpError& e) {  // its plugin may be one that did not load
    return report(name, "argument", e.what() + kiln::cli::skipped_plugins_note(), cmd.usage, kiln::cli::kExitUsage);
  } catch (const kiln::ArgumentError& e) {  // unknown op, bad shape, bad dtype, bad device, ...
    return report(name, "argument", e.what(), cmd.usage, kiln::cli::kExitUsage);
  } catch (const kiln::Error& e) {
    return report(name, "error", e.what(), "", kiln::cli::kExitFailed);
  } catch (const std::exception& e) {
    return report(name, "internal", e.what(), "", kiln::cli::kExitFailed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // `--json`, or `--json=VALUE` with a value CLI11 reads as true (`--json=` included).
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") g_json = true;
    else if (arg.compare(0, 7, "--json=") == 0)
      g_json = !(arg == "--json=false" || arg == "--json=0" || arg == "--json=no" || arg == "--json=off" ||
                 arg == "--json=-1" || arg == "--json=f" || arg == "--json=n" || arg == "--json=disable");
  }
  CLI::App app{"kiln: a plugin-based GPU kernel registry with an autotuner", "kiln"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + kiln::version().text, "Print kiln's version and exit");
  bool wide = false;
  app.add_flag("--wide", wide, "Print tables in full (default: fit the terminal's width)");
  app.fallthrough();  // subcommands accept kiln's own flags (--wide) too; inherited when added
  std::vector<kiln::cli::Command> commands = {
      kiln::cli::make_devices_command(app), kiln::cli::make_list_command(app),   kiln::cli::make_tune_command(app),
      kiln::cli::make_bench_command(app),   kiln::cli::make_verify_command(app), kiln::cli::make_explain_command(app),
      kiln::cli::make_db_command(app),      kiln::cli::make_demo_command(app),
      kiln::cli::make_plugins_command(app),
  };
  // `--dtype=` means an empty value, refused by name, not `--dtype <the next argument>`.
  const std::vector<std::string> args = kiln::cli::with_explicit_empty_values(app, argc, argv);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args) arg_ptrs.push_back(a.c_str());
  argc = static_cast<int>(arg_ptrs.size());
  const char* const* const args_v = arg_ptrs.data();
  try {
    app.parse(argc, args_v);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string usage = kTopUsage;
    for (const auto& c : commands)
      if (c.app->parsed()) usage = c.usage;
    // A mistyped command or flag gets its name and the closest known one, not CLI11's message.
    const std::string typo = kiln::cli::describe_unknown_input(app, argc, args_v);
    return report("kiln", "usage", typo.empty() ? std::string(e.what()) : typo, usage, kiln::cli::kExitUsage);
  }
  kiln::cli::set_wide_output(wide);
  for (const auto& c : commands)
    if (c.app->parsed()) return run_guarded(c);
  std::cerr << kTopUsage << "\n";
  return kiln::cli::kExitUsage;
}
