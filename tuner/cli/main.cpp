// kiln: the command-line tool.  Subcommands live one per file (cmd_*.cpp); this file parses
// the command line and turns errors into messages with the usage line and an exit code:
// 0 ok, 1 something failed (a wrong result, nothing tuned), 2 bad input (flags, op, shape).
// Under --json an error is also a JSON document on stdout ({"error": {"kind", "message"}}).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
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

// A quoted value longer than this is shown by its ends: an op name or a shape of 100000
// characters (a variable holding a file's contents) made a 100 KB error line.
constexpr std::size_t kMaxQuoted = 512;

// `message` with each '...' value past kMaxQuoted characters cut in the middle, saying how much.
// Only a run without spaces counts as a value: an apostrophe in the prose ("op()'s") must not
// pair with the next quote and cut the words between.
std::string shorten_quoted(const std::string& message) {
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    const std::size_t open = message.find('\'', i);
    const std::size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
    if (close == std::string::npos) break;
    out.append(message, i, open + 1 - i);
    const std::size_t n = close - open - 1;
    if (n > kMaxQuoted && message.find_first_of(" \n", open + 1) >= close) {
      std::size_t head = kMaxQuoted / 2, tail = kMaxQuoted / 2;
      // Cut on UTF-8 character boundaries (never inside an escape's bytes).
      while (head > 0 && (static_cast<unsigned char>(message[open + 1 + head]) & 0xc0) == 0x80) --head;
      while (tail > 0 && (static_cast<unsigned char>(message[close - tail]) & 0xc0) == 0x80) --tail;
      out.append(message, open + 1, head);
      out += "...(" + std::to_string(n - head - tail) + " more bytes)...";
      out.append(message, close - tail, tail);
    } else {
      out.append(message, open + 1, n);
    }
    out += '\'';
    i = close + 1;
  }
  out.append(message, std::min(i, message.size()), std::string::npos);
  return out;
}

// The message on stderr, and under --json the same as a document on stdout.
int report(const std::string& name, const std::string& kind, const std::string& full_message, const std::string& usage,
           int code) {
  const std::string message = shorten_quoted(full_message);
  std::cerr << name << ": " << (kind == "internal" ? "internal error: " : "error: ") << message << "\n";
  if (!usage.empty()) std::cerr << usage << "\n";
  if (g_json) std::cout << kiln::cli::error_document(kind, message).dump() << "\n";
  return code;
}

// Everything printed reached standard output, or the exit status says it did not: a full disk or
// a closed file behind `kiln tune --csv > out.csv` lost the results while kiln exited 0.
int with_output_checked(int code) {
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = errno;
  if (!flush_failed && std::cout && !std::ferror(stdout)) return code;
  std::cerr << "kiln: error: writing to standard output failed"
            << (flush_failed && err ? std::string(": ") + std::strerror(err) : std::string())
            << "; what was printed is incomplete\n";
  return code == 0 ? kiln::cli::kExitFailed : code;
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
    if (e.get_exit_code() == 0) return with_output_checked(app.exit(e));  // --help, --version: to a full disk too
    std::string usage = kTopUsage;
    for (const auto& c : commands)
      if (c.app->parsed()) usage = c.usage;
    // A mistyped command or flag gets its name and the closest known one, not CLI11's message.
    const std::string typo = kiln::cli::describe_unknown_input(app, argc, args_v);
    return with_output_checked(
        report("kiln", "usage", typo.empty() ? std::string(e.what()) : typo, usage, kiln::cli::kExitUsage));
  }
  kiln::cli::set_wide_output(wide);
  for (const auto& c : commands)
    if (c.app->parsed()) return with_output_checked(run_guarded(c));
  std::cerr << kTopUsage << "\n";
  return kiln::cli::kExitUsage;
}
