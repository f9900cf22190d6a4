// kiln plugins check [DIR...]: loads each plugin file on the plugin path in a child process and
// says, per file, whether it loads and, if not, how it failed: the loader's reason, a signal
// (SIGSEGV, SIGBUS, SIGABRT in a static initialiser), an exit status (a library that calls exit()
// while loading), or a hang.  Loading runs the library's code in the loading process, so a file
// that crashes there cannot be survived in-process; this command finds it.
//
// The child is kiln itself (/proc/self/exe) running the hidden `kiln plugins load-one FILE`,
// which loads one file into an empty registry and prints one result line.  Then, unless a file
// crashed or hung, one more child (`kiln plugins load-path DIR...`) loads them all together, so a
// plugin name, op or variant that two files both claim is reported against the later one.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "range_check.hpp"
#include "table.hpp"
#include "tuning_db_files.hpp"  // detail::control_escaped

namespace kiln::cli {
namespace {
namespace fs = std::filesystem;

// The child's result line starts with this; anything else it prints is the loader's log.
constexpr const char* kResultTag = "kiln-plugin-check:";
constexpr int kChildLoaded = 0;
constexpr int kChildSkipped = 3;

struct PluginsCli {
  std::vector<std::string> dirs;
  std::string one_file;  // load-one
  double timeout_seconds = 60.0;
  bool json = false, verbose = false;
  CLI::App* check = nullptr;
  CLI::App* load_one = nullptr;
  std::vector<std::string> path_dirs;  // load-path
  CLI::App* load_path = nullptr;
};

const char* kUsage =
    "usage: kiln plugins check [DIR...] [--timeout S] [--json] [-v]\n"
    "       (default: the plugin path, KILN_PLUGIN_PATH or the installed plugin directory)";

struct FileReport {
  std::string file;
  std::string status;  // ok, skipped, crashed, exited, hung, not a plugin file, error
  std::string detail;
  std::string log;     // what the child printed besides its result
};

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = strsignal(sig);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig).c_str()) + " (" + (desc ? desc : "?") + ")";
}

// What a child `kiln plugins ARGS...` printed (stdout and stderr, at most 1 MiB) and how it ended.
struct ChildRun {
  std::string text;
  bool hung = false;
  int status = 0;
  std::string error;  // the child could not be started
};

ChildRun run_child(const std::vector<std::string>& args, double timeout_seconds) {
  ChildRun c;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    c.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return c;
  }
  std::string self = "/proc/self/exe";
  std::vector<const char*> argv = {"kiln", "plugins"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    c.error = std::string("cannot fork: ") + std::strerror(errno);
    return c;
  }
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::execv(self.c_str(), const_cast<char* const*>(argv.data()));
    std::fprintf(stderr, "cannot run %s: %s\n", self.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      c.hung = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its output: it ended (or closed stdout itself)
    if (c.text.size() < (1u << 20)) c.text.append(buf, static_cast<std::size_t>(n));
  }
  if (c.hung) ::kill(pid, SIGKILL);
  ::close(out[0]);
  while (::waitpid(pid, &c.status, 0) < 0 && errno == EINTR) {
  }
  return c;
}

// Runs `kiln plugins load-one FILE` and judges how it ended.
FileReport check_in_child(const std::string& file, double timeout_seconds) {
  FileReport r;
  r.file = file;
  const ChildRun child = run_child({"load-one", file}, timeout_seconds);
  if (!child.error.empty()) {
    r.status = "error";
    r.detail = child.error;
    return r;
  }
  const std::string& text = child.text;
  const bool hung = child.hung;
  const int status = child.status;
  std::string result, log;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.rfind(kResultTag, 0) == 0)
      result = line.substr(std::strlen(kResultTag) + 1);
    else if (!line.empty())
      log += line + "\n";
    start = end + 1;
  }
  r.log = log;
  if (hung) {
    r.status = "hung";
    r.detail = "still loading after " + fmt(timeout_seconds) + " s (killed)";
  } else if (WIFSIGNALED(status)) {
    r.status = "crashed";
    r.detail = "killed by " + signal_text(WTERMSIG(status)) + " while loading";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kChildLoaded && !result.empty()) {
    r.status = "ok";
    r.detail = result;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kChildSkipped && !result.empty()) {
    r.status = "skipped";
    r.detail = result;
  } else if (WIFEXITED(status)) {
    r.status = "exited";
    r.detail = "the process ended with status " + std::to_string(WEXITSTATUS(status)) +
               " while loading, before kiln could check the plugin (a static initialiser that calls exit?)";
  } else {
    r.status = "error";
    r.detail = "the check process ended abnormally";
  }
  return r;
}

// Every file named like a plugin in `dirs` (regular or not: the child reports what it is).
std::vector<std::string> plugin_files(const std::vector<std::string>& dirs, std::vector<FileReport>& reports) {
  std::vector<std::string> files;
  for (const std::string& dir : dirs) {
    if (!fs::path(dir).is_absolute()) {
      reports.push_back({dir, "error", "relative entry of KILN_PLUGIN_PATH: kiln ignores it (write $PWD/" + dir + ")", ""});
      continue;
    }
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      // A library named where its directory belongs said only "Not a directory".
      reports.push_back({dir, "error",
                         ec == std::errc::not_a_directory
                             ? "not a directory: kiln plugins check takes directories and checks the libkiln_*.so "
                               "files in them (name the directory that holds this file)"
                             : "cannot read plugin directory: " + ec.message(),
                         ""});
      continue;
    }
    std::vector<std::string> here;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > 11 && name.rfind("libkiln_", 0) == 0 && name.compare(name.size() - 3, 3, ".so") == 0)
        here.push_back(it->path().string());
    }
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  return files;
}

int run_load_one(const std::string& file) {
  Registry registry;
  PluginLoader loader;
  const bool ok = loader.load_file(file, registry);
  std::string line;
  if (ok) {
    // The loader's record, not the registry's: a plugin that registers nothing (the vendor
    // plugin of a build without CUDA) has no schema or variant to name it ("plugin direct :").
    const Source src = loader.loaded_plugins().empty() ? Source{} : loader.loaded_plugins().back();
    line = "plugin " + src.plugin + " " + src.version + ": " + std::to_string(registry.op_names().size()) + " op(s), " +
           std::to_string(registry.all_variants().size()) + " variant(s)";
    for (const PluginLoadError& w : loader.warnings()) line += "; warning: " + w.reason;
  } else {
    line = loader.errors().empty() ? std::string("not loaded") : loader.errors().back().reason;
  }
  std::cout << kResultTag << " " << line << "\n" << std::flush;
  return ok ? kChildLoaded : kChildSkipped;
}

// The child of the names check: loads the whole path as a Runtime does and prints one line per
// file the loader refused something of ("<tag> <file>\t<reason>").
int run_load_path(const std::vector<std::string>& dirs) {
  Registry registry;
  PluginLoader loader;
  loader.load_dirs(dirs, registry);
  for (const PluginLoadError& e : loader.errors()) std::cout << kResultTag << " " << e.file << "\t" << e.reason << "\n";
  std::cout << std::flush;
  return kChildLoaded;
}

// Each file loads alone, but together a plugin name, op or variant may be taken twice: the loader
// then skips the later file, or refuses its names (docs/architecture.md, "Plugins").  When no
// file crashed or hung alone, the whole path is loaded once more in one child, as a Runtime loads
// it, and what it refused is reported against the files that were "ok" alone.
void check_names_together(const std::vector<std::string>& dirs, double timeout_seconds, std::vector<FileReport>& reports) {
  for (const FileReport& r : reports)
    if (r.status == "crashed" || r.status == "exited" || r.status == "hung") return;
  const ChildRun child = run_child([&] {
    std::vector<std::string> args = {"load-path"};
    args.insert(args.end(), dirs.begin(), dirs.end());
    return args;
  }(), timeout_seconds);
  if (!child.error.empty() || child.hung || !WIFEXITED(child.status) || WEXITSTATUS(child.status) != kChildLoaded) {
    reports.push_back({"(every file, loaded together)", "error",
                       child.error.empty() ? "the process that loaded them together did not finish" : child.error, child.text});
    return;
  }
  std::size_t start = 0;
  const std::string& text = child.text;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind(kResultTag, 0) != 0) continue;
    const std::string rest = line.substr(std::strlen(kResultTag) + 1);
    const std::size_t tab = rest.find('\t');
    if (tab == std::string::npos) continue;
    const std::string file = rest.substr(0, tab), reason = rest.substr(tab + 1);
    for (FileReport& r : reports) {
      if (r.file != file || (r.status != "ok" && r.status != "conflict")) continue;
      r.detail = (r.status == "ok" ? std::string("alone: ") + r.detail + "; with the others: " : r.detail + "; ") + reason;
      r.status = "conflict";
    }
  }
}

}  // namespace

Command make_plugins_command(CLI::App& parent) {
  auto o = std::make_shared<PluginsCli>();
  Command c;
  c.app = parent.add_subcommand("plugins", "Check the plugin files, each loaded in a process of its own");
  c.app->require_subcommand(1);
  o->check = c.app->add_subcommand("check", "Load each plugin file in a child process and report how it went");
  o->check->add_option("DIR", o->dirs, "Plugin directories (default: the plugin path)")
      ->check(not_empty("a plugin directory", false));
  o->check->add_option("--timeout", o->timeout_seconds, "Seconds one file may take to load (default 60)")
      ->check(in_range(0.1, 3600));
  o->check->add_flag("--json", o->json, "Print JSON");
  o->check->add_flag("-v,--verbose", o->verbose, "Show what each child logged");
  o->load_one = c.app->add_subcommand("load-one", "");  // hidden: the child of `check`
  o->load_one->group("");
  o->load_one->add_option("file", o->one_file)->required();
  o->load_path = c.app->add_subcommand("load-path", "");  // hidden: the names check's child
  o->load_path->group("");
  o->load_path->add_option("dirs", o->path_dirs)->required();
  c.usage = kUsage;
  c.run = [o] {
    if (o->load_one->parsed()) return run_load_one(o->one_file);
    if (o->load_path->parsed()) return run_load_path(o->path_dirs);
    // Directories named here are the user's own words, relative to where they typed them; only
    // KILN_PLUGIN_PATH's relative entries are ignored (and reported so below).
    std::vector<std::string> dirs = o->dirs.empty() ? PluginLoader::default_search_path() : o->dirs;
    if (!o->dirs.empty())
      for (std::string& d : dirs) {
        std::error_code ec;
        const fs::path absolute = fs::absolute(d, ec);
        if (!ec) d = absolute.lexically_normal().string();
      }
    std::vector<FileReport> reports;
    const std::vector<std::string> files = plugin_files(dirs, reports);
    for (const std::string& f : files) {
      // The loader's words (plugin_file_problem judges the entry's type first: a broken link
      // names its target, a directory says what it is).
      const std::string problem = plugin_file_problem(f);
      if (!problem.empty()) {
        reports.push_back({f, "not loadable", problem, ""});
        continue;
      }
      reports.push_back(check_in_child(f, o->timeout_seconds));
    }
    if (!files.empty()) check_names_together(dirs, o->timeout_seconds, reports);
    std::size_t bad = 0;
    for (const FileReport& r : reports) bad += r.status == "ok" ? 0 : 1;
    if (o->json) {
      Json list = Json::array();
      for (const FileReport& r : reports)
        list.push(Json::object().set("file", r.file).set("status", r.status).set("detail", r.detail).set("log", r.log));
      std::cout << json_document().set("files", std::move(list)).set("failed", bad).dump() << "\n";
    } else {
      Table t({"file", "status", "detail"});
      for (const FileReport& r : reports)
        t.add({detail::control_escaped(r.file), r.status, detail::control_escaped(r.detail)});
      t.print(std::cout);
      if (o->verbose)
        for (const FileReport& r : reports)
          if (!r.log.empty()) std::cout << "\n" << detail::control_escaped(r.file) << ":\n" << r.log;
      std::cout << files.size() << " plugin file(s) in " << dirs.size() << " director" << (dirs.size() == 1 ? "y" : "ies")
                << ", " << bad << " with a problem\n";
    }
    return bad ? kExitFailed : kExitOk;
  };
  return c;
}

}  // namespace kiln::cli
