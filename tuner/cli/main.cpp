// kiln: the command-line tool.  Subcommands live one per file (cmd_*.cpp); this file parses
// the command line and turns errors into messages with the usage line and an exit code:
// 0 ok, 1 something failed (a wrong result, nothing tuned), 2 bad input (flags, op, shape).
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"

namespace {

const char* kTopUsage =
    "usage: kiln <command> [options]\n"
    "commands: devices, list, tune, bench, verify, explain, db, demo, plugins (kiln <command> --help for each)";

int run_guarded(const kiln::cli::Command& cmd) {
  const std::string name = "kiln " + cmd.app->get_name();
  try {
    return cmd.run();
  } catch (const kiln::cli::UsageError& e) {
    std::cerr << name << ": error: " << e.what() << "\n" << cmd.usage << "\n";
    return kiln::cli::kExitUsage;
  } catch (const kiln::ArgumentError& e) {  // unknown op, bad shape, bad dtype, bad device, ...
    std::cerr << name << ": error: " << e.what() << "\n" << cmd.usage << "\n";
    return kiln::cli::kExitUsage;
  } catch (const kiln::Error& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    return kiln::cli::kExitFailed;
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << e.what() << "\n";
    return kiln::cli::kExitFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln: a plugin-based GPU kernel registry with an autotuner", "kiln"};
  app.require_subcommand(1);
  std::vector<kiln::cli::Command> commands = {
      kiln::cli::make_devices_command(app), kiln::cli::make_list_command(app),   kiln::cli::make_tune_command(app),
      kiln::cli::make_bench_command(app),   kiln::cli::make_verify_command(app), kiln::cli::make_explain_command(app),
      kiln::cli::make_db_command(app),      kiln::cli::make_demo_command(app),
      kiln::cli::make_plugins_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string usage = kTopUsage;
    for (const auto& c : commands)
      if (c.app->parsed()) usage = c.usage;
    std::cerr << "kiln: error: " << e.what() << "\n" << usage << "\n";
    return kiln::cli::kExitUsage;
  }
  for (const auto& c : commands)
    if (c.app->parsed()) return run_guarded(c);
  std::cerr << kTopUsage << "\n";
  return kiln::cli::kExitUsage;
}
