#include "kiln/tuner/plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#if __has_include(<yaml-cpp/depthguard.h>)  // yaml-cpp 0.7 and later
#include <yaml-cpp/depthguard.h>
#define KILN_YAML_DEPTH_GUARD 1
#endif

#include "install_paths.hpp"
#include "kiln/errors.hpp"
#include "kiln/op_schema.hpp"
#include "kiln/tuner/strategy.hpp"
#include "tuning_db_files.hpp"

namespace kiln {
namespace fs = std::filesystem;

namespace {

// `what` quotes the file's text: printable() keeps its escape sequences off the terminal.
[[noreturn]] void plan_error(const std::string& source, int line, const std::string& what, const char* kind = "plan") {
  throw ArgumentError(std::string(kind) + " '" + detail::control_escaped(source) + "'" + (line > 0 ? " line " + std::to_string(line) : std::string()) + ": " +
                      detail::printable(what));
}

// A control character (tab and carriage return aside) in a plan's or problem list's text: no op,
// dtype, shape or device has one, and an escape sequence would reach the terminal in kiln tune's
// table of problems.
bool has_control(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) return true;
  return false;
}

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// Plans and problem lists are small text files; reading stops at this size, so /dev/zero, a FIFO
// or a mistaken multi-GB file end with an error instead of filling the memory.
constexpr std::size_t kMaxFileBytes = std::size_t(16) << 20;
// A plan's search budgets, the same bounds as the command-line flags.
constexpr double kMaxBudgetEvals = 1e9;
constexpr double kMaxBudgetSeconds = 1e7;

std::string read_text(const std::string& path, const char* what) {
  const std::string shown = detail::control_escaped(path);  // as messages show it
  // O_NONBLOCK: opening a FIFO nobody writes to must not hang (an ifstream waits for a writer);
  // it is cleared again, so a pipe with a writer (kiln tune --from <(cmd)) is read to its end.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw ArgumentError(std::string("cannot open ") + what + " '" + shown + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw ArgumentError(std::string(what) + " '" + shown + "' is a directory");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ArgumentError(std::string("cannot read ") + what + " '" + shown + "': " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes)
      throw ArgumentError(std::string(what) + " '" + shown + "' is larger than " + std::to_string(kMaxFileBytes >> 20) +
                          " MiB; is it really a " + what + "?");
  }
  if (text.find('\0') != std::string::npos)
    throw ArgumentError(std::string(what) + " '" + shown + "' contains NUL bytes; is it really a " + what + "?");
  return text;
}

// A string field that must not be empty (`op: !!binary` or `op: ""` is not an op name).
std::string name_field(const YAML::Node& n, const std::string& source, const std::string& field) {
  if (!n.IsScalar() || n.Scalar().empty()) plan_error(source, line_of(n), "`" + field + "` must be a non-empty string");
  if (has_control(n.Scalar()))
    plan_error(source, line_of(n), "`" + field + "` '" + n.Scalar() + "' holds a control character");
  return n.Scalar();
}

template <typename T>
T scalar_as(const YAML::Node& n, const std::string& source, const std::string& field, const char* kind) {
  if (!n.IsScalar()) plan_error(source, line_of(n), "`" + field + "` must be " + kind);
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    plan_error(source, line_of(n), "`" + field + "` must be " + kind + ", not '" + n.Scalar() + "'");
  }
}

// yaml-cpp keeps the first of two equal keys ({op: add, op: gemm} is add); YAML forbids them,
// and a plan that names a field twice has a mistake in it.
void check_unique_keys(const YAML::Node& map, const std::string& source) {
  std::set<std::string> seen;
  for (const auto& kv : map)
    if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
      plan_error(source, line_of(kv.first), "field '" + kv.first.Scalar() + "' is given twice");
}

// A field name as written: a key that is a list, a map or null (`? [a, b] : 1`, `~: 1`) has no
// text, and the error said "unknown field ''"; it now says what was found.
std::string field_name(const YAML::Node& key, const std::string& source, const std::string& expected) {
  if (key.IsScalar()) return key.Scalar();
  const char* kind = key.IsSequence() ? "a list" : key.IsMap() ? "a map" : "null";
  plan_error(source, line_of(key), std::string("a key that is not a plain string (") + kind + ") where a field name belongs (expected " +
                                       expected + ")");
}

// Reads the optional strategy and budgets of a map (the plan or one problem).
template <typename Target>
void read_search_fields(const YAML::Node& map, const std::string& source, Target& t) {
  if (const YAML::Node s = map["strategy"]) {
    t.strategy = name_field(s, source, "strategy");
    // Checked here, where the plan and line are known: at tune time it said only "unknown
    // strategy 'bogus'", naming neither the file nor the problem.
    try {
      (void)make_strategy(*t.strategy);
    } catch (const ArgumentError& e) {
      plan_error(source, line_of(s), "`strategy`: " + std::string(e.what()));
    }
  }
  if (const YAML::Node b = map["budget_evals"]) {
    const long v = scalar_as<long>(b, source, "budget_evals", "a positive integer");
    if (v <= 0 || v > kMaxBudgetEvals)
      plan_error(source, line_of(b), "`budget_evals` must be a positive integer up to 1e9, not " + b.Scalar());
    t.budget_evals = static_cast<std::size_t>(v);
  }
  if (const YAML::Node b = map["budget_seconds"]) {
    const double v = scalar_as<double>(b, source, "budget_seconds", "a number of seconds");
    if (!(v > 0) || !(v <= kMaxBudgetSeconds))  // also refuses nan and inf
      plan_error(source, line_of(b),
                 "`budget_seconds` must be a positive number of seconds up to 1e7, not " + b.Scalar());
    t.budget_seconds = v;
  }
}

// parse_plan without the catch-all for yaml-cpp exceptions.
Plan parse_plan_checked(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
#ifdef KILN_YAML_DEPTH_GUARD
  } catch (const YAML::DeepRecursion& e) {  // its message is "bad file"
    plan_error(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "invalid YAML: nested more than 2000 levels deep");
#endif
  } catch (const YAML::ParserException& e) {
    plan_error(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "invalid YAML: " + e.msg);
  }
  Plan plan;
  plan.source = source;
  if (!root.IsMap()) plan_error(source, line_of(root), "expected a map with `problems:`");
  check_unique_keys(root, source);
  const std::string plan_fields = "problems, strategy, budget_evals, budget_seconds, name, description";
  for (const auto& kv : root) {
    const std::string key = field_name(kv.first, source, plan_fields);
    if (key != "problems" && key != "strategy" && key != "budget_evals" && key != "budget_seconds" && key != "name" &&
        key != "description")
      plan_error(source, line_of(kv.first), "unknown field '" + key + "' (expected " + plan_fields + ")");
  }
  read_search_fields(root, source, plan);
  const YAML::Node problems = root["problems"];
  if (!problems || !problems.IsSequence()) plan_error(source, line_of(root), "`problems:` must be a list of {op, dtype, shape}");
  for (const YAML::Node& item : problems) {
    const int line = line_of(item);
    if (!item.IsMap()) plan_error(source, line, "each problem must be a map {op, dtype, shape}");
    check_unique_keys(item, source);
    const std::string problem_fields = "op, dtype, shape, device, strategy, budget_evals, budget_seconds";
    for (const auto& kv : item) {
      const std::string key = field_name(kv.first, source, problem_fields);
      if (key != "op" && key != "dtype" && key != "shape" && key != "device" && key != "strategy" &&
          key != "budget_evals" && key != "budget_seconds")
        plan_error(source, line_of(kv.first), "unknown problem field '" + key + "' (expected " + problem_fields + ")");
    }
    PlanItem p;
    p.line = line;
    if (!item["op"]) plan_error(source, line, "a problem needs `op`");
    if (!item["shape"]) plan_error(source, line, "a problem needs `shape` (e.g. 4096x4096x4096)");
    p.op = name_field(item["op"], source, "op");
    p.shape = name_field(item["shape"], source, "shape");
    if (const YAML::Node d = item["dtype"]) {
      const std::string dtype = scalar_as<std::string>(d, source, "dtype", "a dtype name");  // names the plan itself
      try {
        p.dtype = parse_dtype(dtype);
      } catch (const ArgumentError& e) {
        plan_error(source, line_of(d), e.what());
      }
    }
    if (const YAML::Node d = item["device"]) p.device = name_field(d, source, "device");
    read_search_fields(item, source, p);
    plan.problems.push_back(std::move(p));
  }
  return plan;
}

}  // namespace

Plan parse_plan(const std::string& text, const std::string& source) {
  try {
    return parse_plan_checked(text, source);
  } catch (const YAML::Exception& e) {  // anything yaml-cpp throws past the checks above
    plan_error(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "invalid plan: " + e.msg);
  }
}

Plan load_plan(const std::string& path) { return parse_plan(read_text(path, "plan"), path); }

namespace {
// The words of a problem list line, its comment left out.
std::vector<std::string> problem_list_words(std::string line) {
  const auto hash = line.find('#');
  if (hash != std::string::npos) line.erase(hash);
  std::istringstream words(line);
  std::vector<std::string> w;
  for (std::string s; words >> s;) w.push_back(s);
  return w;
}
}  // namespace

namespace {
// Whether every byte of `word` is one of `allowed` (or a letter or digit), and it is not longer
// than `max` bytes: the form a word of a problem list has, which is then safe to quote.
bool word_of(const std::string& word, const char* allowed, std::size_t max) {
  if (word.empty() || word.size() > max) return false;
  return std::all_of(word.begin(), word.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && std::strchr(allowed, c) != nullptr);
  });
}
}  // namespace

// The reason quotes none of the line's text but words that already have the form they should (an
// op name, a dtype): `kiln tune --from /etc/shadow` printed the file's first line in its error.
// A line that is not kiln's format is described (how many words, which word is off, the byte and
// column of a control character), never shown.
std::string problem_list_line_problem(const std::string& line) {
  const char* const form = "expected '<op> <dtype> <shape> [device]'";
  for (std::size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", c);
      return std::string("a control character (byte ") + byte + ") at column " + std::to_string(i + 1) + "; " + form;
    }
  }
  const std::vector<std::string> w = problem_list_words(line);
  if (w.empty()) return {};
  if (w.size() < 3 || w.size() > 4)
    return std::string(form) + ", got a line of " + std::to_string(w.size()) + (w.size() == 1 ? " word" : " words");
  if (!word_of(w[0], "_", 64)) return std::string(form) + ": the first word is not an op name (letters, digits and '_')";
  bool dtype_known = false;
  for (DType t : kAllDTypes) dtype_known = dtype_known || w[1] == dtype_name(t);
  if (!dtype_known) {
    std::string names;
    for (DType t : kAllDTypes) names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
    return std::string(form) + ": the second word is not a dtype (" + names + ")";
  }
  if (!word_of(w[2], "_x,=", 256))
    return std::string(form) + ": the third word is not a shape (extents such as 4096x4096 or m=64,n=32)";
  if (w.size() == 4 && !word_of(w[3], ":", 32))
    return std::string(form) + ": the fourth word is not a device (host or cuda:N)";
  return {};
}

Plan load_problem_list(const std::string& path) {
  std::istringstream in(read_text(path, "problem list"));
  Plan plan;
  plan.source = path;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (std::string why = problem_list_line_problem(line); !why.empty()) plan_error(path, number, why, "problem list");
    const std::vector<std::string> w = problem_list_words(line);
    if (w.empty()) continue;
    PlanItem p;
    p.line = number;
    p.op = w[0];
    p.dtype = parse_dtype(w[1]);
    p.shape = w[2];
    if (w.size() == 4) p.device = w[3];
    plan.problems.push_back(std::move(p));
  }
  return plan;
}

std::string shipped_plans_dir() {
  const std::string dir = detail::installed_config_dir();
  return dir.empty() ? dir : (fs::path(dir) / "plans").string();
}

std::string find_plan(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  if (fs::exists(name_or_path, ec))  // a directory, a device, a FIFO: say so, not "no plan file"
    throw ArgumentError("plan '" + detail::printable(name_or_path) + "' is " +
                        (fs::is_directory(name_or_path, ec) ? "a directory" : "not a regular file") +
                        ", expected a plan .yaml file or a shipped plan's name");
  const std::string dir = shipped_plans_dir();
  if (!dir.empty() && name_or_path.find('/') == std::string::npos) {
    for (const std::string& name : {name_or_path, name_or_path + ".yaml"}) {
      const fs::path p = fs::path(dir) / name;
      if (fs::is_regular_file(p, ec)) return p.string();
    }
  }
  std::string shipped;
  if (!dir.empty())
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".yaml") shipped += (shipped.empty() ? "" : ", ") + it->path().stem().string();
  throw ArgumentError("no plan file '" + detail::printable(name_or_path) + "'" +
                      (shipped.empty() ? std::string() : " (shipped plans in " + dir + ": " + shipped + ")"));
}

std::string problem_list_line(const Problem& problem) {
  std::string shape;
  for (int i = 0; i < problem.n_dims; ++i) {
    const std::string name = problem.schema && i < static_cast<int>(problem.schema->dim_names.size())
                                 ? problem.schema->dim_names[i]
                                 : "d" + std::to_string(i);
    shape += (i ? "," : "") + name + "=" + std::to_string(problem.dims[i]);
  }
  return (problem.schema ? problem.schema->name : std::string("?")) + " " + std::string(dtype_name(problem.dtype)) + " " +
         (shape.empty() ? std::string("-") : shape) + " " + problem.device.to_string();
}

}  // namespace kiln
