#include "typos.hpp"

#include <vector>

#include <CLI/CLI.hpp>

#include "spelling.hpp"

namespace kiln::cli {
namespace {

// "db show" for kiln's `db show` subcommand, "" for kiln itself.
std::string subcommand_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a && a->get_parent(); a = a->get_parent()) {
    if (a->get_name().empty()) continue;  // an option group
    path = a->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app->get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

const CLI::App* find_subcommand(const CLI::App* app, const std::string& name) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty() && sub->check_name(name)) return sub;
  return nullptr;
}

}  // namespace

std::string describe_unknown_input(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* level = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") break;
    if (token.size() > 1 && token[0] == '-' && !(token[1] >= '0' && token[1] <= '9') && token[1] != '.') {
      const std::string name = token.substr(0, token.find('='));
      const CLI::Option* opt = nullptr;  // kiln's subcommands fall through to their parents' flags
      for (const CLI::App* a = level; a && !opt; a = a->get_parent()) opt = a->get_option_no_throw(name);
      if (!opt) {
        const std::string path = subcommand_path(level);
        return "unknown option '" + name + "' for 'kiln" + (path.empty() ? "" : " " + path) + "'" +
               detail::did_you_mean(name, option_names(level));
      }
      if (opt->get_expected_min() > 0 && name.size() == token.size()) ++i;  // skip its value
      continue;
    }
    const auto subs = level->get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); });
    if (subs.empty()) continue;  // a positional argument (an op, a file)
    if (const CLI::App* sub = find_subcommand(level, token)) {
      level = sub;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    const std::string path = subcommand_path(level);
    const std::string prefix = path.empty() ? "" : path + " ";
    const std::string guess = detail::closest_name(token, names);
    return "unknown command '" + prefix + token + "'" + (guess.empty() ? "" : "; did you mean '" + prefix + guess + "'?");
  }
  return {};
}

std::vector<std::string> with_explicit_empty_values(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> out;
  if (argc > 0) out.emplace_back(argv[0]);
  const CLI::App* level = &app;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (options_done || token == "--") {
      options_done = true;
      out.push_back(token);
      continue;
    }
    out.push_back(token);
    if (token.size() > 1 && token[0] == '-' && !(token[1] >= '0' && token[1] <= '9') && token[1] != '.') {
      const std::size_t eq = token.find('=');
      const std::string name = token.substr(0, eq);
      const CLI::Option* opt = nullptr;
      for (const CLI::App* a = level; a && !opt; a = a->get_parent()) opt = a->get_option_no_throw(name);
      if (!opt || opt->get_expected_min() == 0) continue;  // unknown (reported by the parse) or a flag
      if (eq == std::string::npos) {
        if (i + 1 < argc) out.emplace_back(argv[++i]);  // its value, whatever it looks like
      } else if (eq + 1 == token.size()) {
        out.back() = name;
        out.emplace_back();
      }
      continue;
    }
    if (const CLI::App* sub = find_subcommand(level, token)) level = sub;
  }
  return out;
}

}  // namespace kiln::cli
