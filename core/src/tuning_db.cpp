// TuningDb: YAML layers (shipped files under one user file), read on first use, lookup with
// device fallback and nearest-problem search, and crash-, race- and attack-safe writes of the
// user file (the file handling itself is in tuning_db_files.cpp).
#include "kiln/tuning_db.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#if __has_include(<yaml-cpp/depthguard.h>)  // yaml-cpp 0.7 and later
#include <yaml-cpp/depthguard.h>
#define KILN_YAML_DEPTH_GUARD 1
#endif

#include "install_paths.hpp"
#include "kiln/errors.hpp"
#include "tuning_db_files.hpp"

namespace kiln {

namespace fs = std::filesystem;
using detail::printable;

bool TuningEntry::operator==(const TuningEntry& o) const {
  return variant == o.variant && config == o.config && median_us == o.median_us && mad_us == o.mad_us &&
         samples == o.samples && throughput == o.throughput && throughput_unit == o.throughput_unit &&
         plugin_name == o.plugin_name && plugin_version == o.plugin_version && plugin_build == o.plugin_build &&
         tuned_at == o.tuned_at && alternatives == o.alternatives && extra_fields == o.extra_fields && extra_plugin_fields == o.extra_plugin_fields;
}

bool detail::is_db_name(const std::string& s, bool allow_dots) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (allow_dots && (c == '.' || c == '-'));
  });
}

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& reason) {
  throw TuningDbError(detail::control_escaped("tuning database '" + what + "': " + reason));
}

// ---- what a valid entry holds ----------------------------------------------------------------

bool is_printable_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool is_name(const std::string& s, bool allow_dots) { return detail::is_db_name(s, allow_dots); }

// Why `key` is not a problem key as Problem::key() writes them, `dtype|dim=N|...` with distinct dim
// names ("" when it is).  Such an entry can never be any problem's: without this check it was
// listed as "ok" by `kiln db show`, and one with a key parse_problem_key reads (a negative size)
// was taken as a neighbour by dispatch.
std::string key_problem(const std::string& key) {
  ParsedKey parsed;
  if (!parse_problem_key(key, parsed)) {
    const std::string dtype = key.substr(0, key.find('|'));
    bool known = false;
    for (DType t : kAllDTypes) known = known || dtype_name(t) == dtype;
    if (!known) return "problem key '" + printable(key) + "' does not start with a dtype name (f32|m=64|...)";
    return "problem key '" + printable(key) + "' is not dtype|name=integer|... with at most " +
           std::to_string(Problem::kMaxDims) + " dims";
  }
  for (int i = 0; i < parsed.n_dims; ++i) {
    if (!is_name(parsed.names[i], false))
      return "problem key '" + printable(key) + "': dim '" + printable(parsed.names[i]) + "' is not a name";
    for (int j = 0; j < i; ++j)
      if (parsed.names[j] == parsed.names[i])
        return "problem key '" + printable(key) + "' gives dim '" + parsed.names[i] + "' twice";
  }
  return {};
}

// Why `e` cannot be stored or used ("" when it can): names are names, text is printable ASCII
// (nothing a terminal would interpret), times are finite and not negative.
std::string entry_problem(const TuningEntry& e) {
  if (!is_name(e.variant, true)) return "`variant` '" + printable(e.variant) + "' is not a variant name";
  for (const auto& [name, value] : e.config.values())
    if (!is_name(name, false)) return "config parameter '" + printable(name) + "' is not a parameter name";
  auto bad_time = [](double v) { return !std::isfinite(v) || v < 0.0; };
  if (bad_time(e.median_us)) return "`median_us` must be a finite number >= 0";
  if (bad_time(e.mad_us)) return "`mad_us` must be a finite number >= 0";
  if (bad_time(e.throughput)) return "`throughput` must be a finite number >= 0";
  if (e.samples < 0) return "`samples` must not be negative";
  if (e.alternatives.size() > kTuningMaxAlternatives)
    return "`alternatives` holds more than " + std::to_string(kTuningMaxAlternatives) + " entries";
  for (const TunedAlternative& a : e.alternatives) {
    if (!is_name(a.variant, true)) return "alternative `variant` '" + printable(a.variant) + "' is not a variant name";
    for (const auto& [name, value] : a.config.values())
      if (!is_name(name, false)) return "alternative config parameter '" + printable(name) + "' is not a parameter name";
    if (bad_time(a.median_us)) return "alternative `median_us` must be a finite number >= 0";
    if (!is_printable_ascii(a.plugin_build) || a.plugin_build.find(' ') != std::string::npos)
      return "alternative build '" + printable(a.plugin_build) + "' holds spaces, control or non-ASCII characters";
  }
  const std::pair<const char*, const std::string*> texts[] = {
      {"throughput_unit", &e.throughput_unit}, {"plugin name", &e.plugin_name}, {"plugin version", &e.plugin_version},
      {"plugin build", &e.plugin_build},       {"tuned_at", &e.tuned_at}};
  for (const auto& [field, text] : texts)
    if (!is_printable_ascii(*text)) return "`" + std::string(field) + "` holds control or non-ASCII characters";
  // Fields kiln does not know are written back as they came (a newer kiln's): one named like a
  // field of kiln's own, given twice, or not a name made the written entry one the next read
  // skips ("duplicate key 'variant'"), and text that is not YAML was dropped without a word.
  static const char* const own_fields[] = {"variant",  "config",          "median_us", "mad_us",      "samples",
                                           "throughput", "throughput_unit", "plugin",    "tuned_at", "alternatives"};
  static const char* const own_plugin_fields[] = {"name", "version", "build"};
  auto extra_problem = [](const std::vector<std::pair<std::string, std::string>>& extra, const char* which,
                          const auto& own) -> std::string {
    for (std::size_t i = 0; i < extra.size(); ++i) {
      const std::string& name = extra[i].first;
      const std::string head = std::string(which) + " '" + printable(name) + "'";
      if (!is_name(name, true)) return head + " is not a field name";
      for (const char* f : own)
        if (name == f) return head + " is one of kiln's own fields (set the member of TuningEntry instead)";
      for (std::size_t j = 0; j < i; ++j)
        if (extra[j].first == name) return head + " is given twice";
      try {
        (void)YAML::Load(extra[i].second);
      } catch (const YAML::Exception&) {
        return head + " holds text that is not YAML: '" + printable(extra[i].second) + "'";
      }
    }
    return {};
  };
  if (std::string why = extra_problem(e.extra_fields, "extra field", own_fields); !why.empty()) return why;
  return extra_problem(e.extra_plugin_fields, "extra plugin field", own_plugin_fields);
}

// ---- unknown fields, kept as YAML text ----------------------------------------------------------

constexpr int kMaxKeptDepth = 64;  // deeper unknown fields (or alias cycles) are refused

// A copy without the source's flow/block styles (tags kept: a quoted '~' stays a string).
// Returns false when the node nests deeper than kMaxKeptDepth.
bool without_style(const YAML::Node& n, int depth, YAML::Node& out) {
  if (depth > kMaxKeptDepth) return false;
  switch (n.Type()) {
    case YAML::NodeType::Map:
      out = YAML::Node(YAML::NodeType::Map);
      for (const auto& kv : n) {
        YAML::Node k, v;
        if (!without_style(kv.first, depth + 1, k) || !without_style(kv.second, depth + 1, v)) return false;
        out[k] = v;
      }
      return true;
    case YAML::NodeType::Sequence:
      out = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& x : n) {
        YAML::Node v;
        if (!without_style(x, depth + 1, v)) return false;
        out.push_back(v);
      }
      return true;
    case YAML::NodeType::Scalar:
      out = YAML::Node(n.Scalar());
      out.SetTag(n.Tag());
      return true;
    default: out = YAML::Node(YAML::NodeType::Null); return true;
  }
}

std::string flow_text(const YAML::Node& styleless) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << styleless;
  return out.good() ? std::string(out.c_str()) : std::string();
}

// The text an unknown field is kept as: one flow-style form whatever style the file used, so a
// table survives a write and a re-read unchanged (a block map read back from the flow form we
// write would otherwise dump differently).  Empty when the value cannot be kept: it nests too
// deeply, or its text does not read back as itself (odd tags, complex keys).
std::string kept_yaml(const YAML::Node& node) {
  YAML::Node copy, again;
  if (!without_style(node, 0, copy)) return {};
  const std::string text = flow_text(copy);
  if (text.empty()) return {};
  try {
    if (!without_style(YAML::Load(text), 0, again) || flow_text(again) != text) return {};
  } catch (const YAML::Exception&) {
    return {};
  }
  return text;
}

// ---- YAML -> table ---------------------------------------------------------------------------

// Counts the nodes a document holds once its aliases are expanded, without expanding them, and
// stops at the limit: a few KB of nested aliases would otherwise stand for billions of nodes.
class NodeCounter : public YAML::EventHandler {
 public:
  explicit NodeCounter(std::uint64_t limit) : limit_(limit) {}
  struct TooMany {};

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = sizes_.find(anchor);
    add(it == sizes_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  void add(std::uint64_t n) {
    count_ = n > limit_ - std::min(count_, limit_) ? limit_ + 1 : count_ + n;
    if (count_ > limit_) throw TooMany{};
  }
  void leaf(YAML::anchor_t anchor) {
    add(1);
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
  }
  void open(YAML::anchor_t anchor) {
    add(1);
    open_.emplace_back(anchor, count_ - 1);
  }
  void close() {
    if (open_.empty()) return;
    auto [anchor, start] = open_.back();
    open_.pop_back();
    if (anchor != YAML::NullAnchor) sizes_[anchor] = count_ - start;
  }
  std::uint64_t limit_;
  std::uint64_t count_ = 0;
  std::vector<std::pair<YAML::anchor_t, std::uint64_t>> open_;
  std::unordered_map<YAML::anchor_t, std::uint64_t> sizes_;
};

// What a bad entry throws; the caller skips the entry and records a warning.
struct EntryProblem {
  YAML::Mark mark;
  std::string reason;
};

[[noreturn]] void entry_fail(const YAML::Node& node, const std::string& reason) {
  throw EntryProblem{node.Mark(), reason};
}

// An unknown field's value as kept text, or the entry is refused (skipped alone, with its line).
std::string kept_or_fail(const YAML::Node& value, const std::string& field) {
  std::string kept = kept_yaml(value);
  if (kept.empty())
    entry_fail(value, "field '" + printable(field) + "' cannot be kept (nested deeper than " +
                          std::to_string(kMaxKeptDepth) + " levels, or YAML that does not read back as itself)");
  return kept;
}

std::string scalar_string(const YAML::Node& node, const std::string& field) {
  if (node.IsNull()) return {};
  if (!node.IsScalar()) entry_fail(node, "`" + field + "` must be a string");
  return node.Scalar();
}

template <typename T>
T scalar_number(const YAML::Node& node, const std::string& field, const char* kind) {
  if (!node.IsScalar()) entry_fail(node, "`" + field + "` must be " + kind);
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    entry_fail(node, "`" + field + "` must be " + kind + ", not '" + printable(node.Scalar()) + "'");
  }
}

// Iterates a map, rejecting duplicate and non-scalar keys (yaml-cpp keeps both silently).
template <typename Fn>
void for_each_field(const YAML::Node& map, Fn&& fn) {
  std::vector<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) entry_fail(kv.first, "keys must be strings");
    const std::string key = kv.first.Scalar();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) entry_fail(kv.first, "duplicate key '" + printable(key) + "'");
    seen.push_back(key);
    fn(key, kv.second);
  }
}

// The fields kiln writes into every entry: in a file kiln wrote, an entry without one of them was
// cut short (a truncated file).
const char* const kEntryFields[] = {"variant", "config",          "median_us", "mad_us",  "samples",
                                    "throughput", "throughput_unit", "plugin",    "tuned_at"};

// config: a map of name: integer (or null for none) into `out`.
void parse_config(const YAML::Node& value, const std::string& field, Config& out) {
  if (!value.IsMap() && !value.IsNull()) entry_fail(value, "`" + field + "` must be a map of name: integer");
  if (value.IsNull()) return;
  for_each_field(value, [&](const std::string& name, const YAML::Node& v) {
    out.set(name, scalar_number<int>(v, field + "/" + printable(name), "an integer"));
  });
}

// One alternative: a single scalar "VARIANT CONFIG MEDIAN_US [BUILD]", CONFIG being "-" or
// "name=value,name=value" (one YAML node per alternative: thousands of them are read on the first
// op() of a process, and maps of maps cost yaml-cpp about three times as long).
TunedAlternative parse_alternative(const YAML::Node& node) {
  const char* expected = "an alternative must be \"VARIANT CONFIG MEDIAN_US [BUILD]\" (CONFIG: - or name=value,...)";
  if (!node.IsScalar()) entry_fail(node, expected);
  std::vector<std::string> parts;
  std::istringstream words(node.Scalar());
  for (std::string w; words >> w;) parts.push_back(w);
  if (parts.size() < 3 || parts.size() > 4) entry_fail(node, std::string(expected) + ", not '" + printable(node.Scalar()) + "'");
  TunedAlternative a;
  a.variant = parts[0];
  if (parts[1] != "-") {
    try {
      a.config = Config::parse(parts[1]);
    } catch (const ArgumentError& e) {
      entry_fail(node, "alternative config '" + printable(parts[1]) + "' is not name=integer,...: " + std::string(e.what()));  // already printable
    }
  }
  char* end = nullptr;
  a.median_us = std::strtod(parts[2].c_str(), &end);
  if (parts[2].empty() || *end != '\0') entry_fail(node, "alternative time '" + printable(parts[2]) + "' is not a number");
  if (parts.size() == 4) a.plugin_build = parts[3];
  return a;
}

TuningEntry parse_entry(const YAML::Node& node, bool kiln_written) {
  if (!node.IsMap()) entry_fail(node, "an entry must be a map (variant, config, median_us, ...)");
  TuningEntry e;
  std::vector<std::string> present;
  for_each_field(node, [&](const std::string& field, const YAML::Node& value) {
    present.push_back(field);
    if (field == "variant") {
      e.variant = scalar_string(value, field);
    } else if (field == "config") {
      parse_config(value, "config", e.config);
    } else if (field == "median_us") {
      e.median_us = scalar_number<double>(value, field, "a number");
    } else if (field == "mad_us") {
      e.mad_us = scalar_number<double>(value, field, "a number");
    } else if (field == "samples") {
      e.samples = scalar_number<int>(value, field, "an integer");
    } else if (field == "throughput") {
      e.throughput = scalar_number<double>(value, field, "a number");
    } else if (field == "throughput_unit") {
      e.throughput_unit = scalar_string(value, field);
    } else if (field == "tuned_at") {
      e.tuned_at = scalar_string(value, field);
    } else if (field == "alternatives") {
      if (value.IsNull()) return;
      if (!value.IsSequence()) entry_fail(value, "`alternatives` must be a list of \"VARIANT CONFIG MEDIAN_US [BUILD]\"");
      if (value.size() > kTuningMaxAlternatives)
        entry_fail(value, "`alternatives` holds more than " + std::to_string(kTuningMaxAlternatives) + " entries");
      for (const auto& item : value) e.alternatives.push_back(parse_alternative(item));
    } else if (field == "plugin") {
      if (value.IsNull()) return;
      if (!value.IsMap()) entry_fail(value, "`plugin` must be a map {name, version, build}");
      for_each_field(value, [&](const std::string& name, const YAML::Node& v) {
        if (name == "name") e.plugin_name = scalar_string(v, "plugin/name");
        else if (name == "version") e.plugin_version = scalar_string(v, "plugin/version");
        else if (name == "build") e.plugin_build = scalar_string(v, "plugin/build");
        else if (is_name(name, true)) e.extra_plugin_fields.emplace_back(name, kept_or_fail(v, "plugin/" + name));
        else entry_fail(v, "plugin field '" + printable(name) + "' is not a field name");
      });
    } else if (is_name(field, true)) {
      e.extra_fields.emplace_back(field, kept_or_fail(value, field));  // a newer kiln's field: kept as it is
    } else {
      entry_fail(value, "field '" + printable(field) + "' is not a field name");
    }
  });
  if (e.variant.empty()) entry_fail(node, "entry has no `variant`");
  if (std::find(present.begin(), present.end(), "config") == present.end()) entry_fail(node, "entry has no `config`");
  if (kiln_written)
    for (const char* field : kEntryFields)
      if (std::find(present.begin(), present.end(), field) == present.end())
        entry_fail(node, std::string("entry has no `") + field + "`: the file looks truncated");
  if (std::string why = entry_problem(e); !why.empty()) entry_fail(node, why);
  return e;
}

struct ParsedFile {
  TuningTable table;
  std::vector<std::pair<std::string, std::string>> extra_top;  // unknown top-level keys, as YAML
};

std::string at_line(const std::string& what, const YAML::Mark& mark) {
  std::string loc = "tuning database '" + detail::control_escaped(what) + "'";
  if (mark.line >= 0) loc += " line " + std::to_string(mark.line + 1);
  return loc;
}

ParsedFile parse_yaml(const std::string& text, const std::string& what, std::vector<std::string>* warnings) {
  if (text.size() > kTuningDbMaxFileBytes)
    fail(what, "is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                   std::to_string(kTuningDbMaxFileBytes) + " bytes for a tuning database");
  YAML::Node root;
  try {
    {
      std::istringstream in(text);
      YAML::Parser parser(in);
      NodeCounter counter(kTuningDbMaxNodes);
      parser.HandleNextDocument(counter);
    }
    root = YAML::Load(text);
  } catch (const NodeCounter::TooMany&) {
    fail(what, "holds more than " + std::to_string(kTuningDbMaxNodes) +
                   " YAML nodes once its aliases are expanded; refused (a tuning database needs no aliases)");
  } catch (const YAML::ParserException& e) {
    std::string loc = "tuning database '" + detail::control_escaped(what) + "'";
    if (e.mark.line >= 0)
      loc += " line " + std::to_string(e.mark.line + 1) + " column " + std::to_string(e.mark.column + 1);
    // yaml-cpp's depth guard (a DeepRecursion) says only "bad file".
#ifdef KILN_YAML_DEPTH_GUARD
    const bool too_deep = dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr;
#else
    const bool too_deep = false;
#endif
    throw TuningDbError(loc + ": invalid YAML: " + (too_deep ? std::string("nested more than 2000 levels deep") : printable(e.msg)));
  } catch (const YAML::Exception& e) {
    fail(what, "invalid YAML: " + printable(e.what()));
  }

  ParsedFile out;
  auto warn = [&](const YAML::Mark& mark, const std::string& where, const std::string& reason) {
    if (warnings) warnings->push_back(at_line(what, mark) + ": " + where + ": " + reason);
  };
  // An empty document (e.g. a file created with `touch`) holds no entries; that is not corrupt.
  // One with only comments (notes, or a file that is no database: `kiln db merge --into notes`)
  // holds none either, but a rewrite would lose the comments: the warning makes the rewrite keep
  // the file as it was in `<file>.bak` first, and says so.
  if (root.IsNull()) {
    if (warnings && text.find_first_not_of(" \t\r\n") != std::string::npos)
      warnings->push_back("tuning database '" + printable(what) +
                          "': holds no entries, only comments or an empty document; kiln does not keep them when "
                          "it rewrites the file");
    return out;
  }
  auto file_fail = [&](const YAML::Node& node, const std::string& reason) {
    throw TuningDbError(at_line(what, node.Mark()) + ": " + reason);
  };
  if (!root.IsMap()) file_fail(root, "the document must be a map with `schema:` and `devices:`");
  // yaml-cpp reads the first of two equal keys: a second `devices:` (two databases pasted into one
  // file) was dropped without a word, and lost for good at the next rewrite.
  {
    std::set<std::string> seen_keys;
    for (const auto& kv : root)
      if (kv.first.IsScalar() && !seen_keys.insert(kv.first.Scalar()).second)
        file_fail(kv.first, "top-level key '" + printable(kv.first.Scalar()) +
                                "' is repeated (two databases in one file? combine files with kiln db merge)");
  }

  const YAML::Node schema = root["schema"];
  if (!schema.IsDefined()) file_fail(root, "no `schema:` (expected schema: " + std::to_string(kTuningDbSchema) + ")");
  int version = 0;
  try {
    version = schema.as<int>();
  } catch (const YAML::Exception&) {
    file_fail(schema, "`schema:` must be an integer, not '" + (schema.IsScalar() ? printable(schema.Scalar()) : std::string("?")) + "'");
  }
  if (version != kTuningDbSchema)
    file_fail(schema, "schema " + std::to_string(version) + " is not supported (this kiln reads schema " +
                          std::to_string(kTuningDbSchema) + ")");

  // `entries:` is written by kiln: the count of entries that follow, to tell a truncated file.
  const YAML::Node declared_node = root["entries"];
  long long declared = -1;
  if (declared_node.IsDefined()) {
    try {
      declared = declared_node.as<long long>();
    } catch (const YAML::Exception&) {
      declared = -1;
    }
    if (declared < 0) warn(declared_node.Mark(), "entries", "must be a count; not checked");
  }
  const bool kiln_written = declared >= 0;

  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) file_fail(kv.first, "top-level keys must be strings");
    const std::string key = kv.first.Scalar();
    if (key == "schema" || key == "entries" || key == "devices") continue;
    if (!is_name(key, true)) {
      warn(kv.first.Mark(), "top level", "key '" + printable(key) + "' is not a field name (dropped)");
      continue;
    }
    std::string kept = kept_yaml(kv.second);  // a newer kiln's: kept across rewrites
    if (kept.empty()) {
      warn(kv.first.Mark(), "top level", "key '" + printable(key) + "' cannot be kept (too deep, or does not read back as itself; dropped)");
      continue;
    }
    out.extra_top.emplace_back(key, std::move(kept));
  }

  std::size_t seen = 0;  // entries present, valid or not
  auto count = [&](std::size_t n, const YAML::Node& at) {
    seen += n;
    if (seen > kTuningDbMaxEntries)
      file_fail(at, "holds more than " + std::to_string(kTuningDbMaxEntries) + " entries, the limit for a tuning database");
  };
  auto entries_below = [](const YAML::Node& n, int depth) {
    std::size_t total = 0;
    if (!n.IsMap()) return total;
    if (depth == 0) return static_cast<std::size_t>(n.size());
    for (const auto& kv : n)
      if (kv.second.IsMap()) total += kv.second.size();
    return total;
  };

  const YAML::Node devices = root["devices"];
  if (devices.IsDefined() && !devices.IsNull()) {
    if (!devices.IsMap()) file_fail(devices, "`devices:` must be a map of device fingerprint -> ops");
    for (const auto& dkv : devices) {
      const YAML::Node& ops = dkv.second;
      if (!dkv.first.IsScalar() || !is_printable_ascii(dkv.first.Scalar()) || dkv.first.Scalar().empty() ||
          out.table.count(dkv.first.Scalar())) {
        count(entries_below(ops, 1), dkv.first);
        warn(dkv.first.Mark(), "devices",
             dkv.first.IsScalar() ? "device key '" + printable(dkv.first.Scalar()) + "' is empty, repeated or not printable; its entries are skipped"
                                  : "a device key must be a string; its entries are skipped");
        continue;
      }
      const std::string dev = dkv.first.Scalar();
      const std::string at_dev = "devices/\"" + dev + "\"";
      auto& dev_table = out.table[dev];
      if (ops.IsNull()) continue;
      if (!ops.IsMap()) {
        warn(ops.Mark(), at_dev, "must be a map of op -> problem keys; skipped");
        continue;
      }
      for (const auto& okv : ops) {
        const YAML::Node& keys = okv.second;
        if (!okv.first.IsScalar() || !is_name(okv.first.Scalar(), false) || dev_table.count(okv.first.Scalar())) {
          count(entries_below(keys, 0), okv.first);
          warn(okv.first.Mark(), at_dev,
               "op '" + (okv.first.IsScalar() ? printable(okv.first.Scalar()) : std::string("?")) +
                   "' is not an op name or is repeated; its entries are skipped");
          continue;
        }
        const std::string op = okv.first.Scalar();
        const std::string at_op = at_dev + "/" + op;
        auto& op_table = dev_table[op];
        if (keys.IsNull()) continue;
        if (!keys.IsMap()) {
          warn(keys.Mark(), at_op, "must be a map of problem key -> entry; skipped");
          continue;
        }
        for (const auto& kkv : keys) {
          count(1, kkv.first);
          if (!kkv.first.IsScalar() || !is_printable_ascii(kkv.first.Scalar()) || kkv.first.Scalar().empty()) {
            warn(kkv.first.Mark(), at_op, "a problem key must be printable text; entry skipped");
            continue;
          }
          const std::string key = kkv.first.Scalar();
          const std::string at_key = at_op + "/\"" + key + "\"";
          if (std::string why = key_problem(key); !why.empty()) {
            warn(kkv.first.Mark(), at_op, why + "; entry skipped");
            continue;
          }
          if (op_table.count(key)) {
            warn(kkv.first.Mark(), at_key, "repeated key; the later entry is skipped");
            continue;
          }
          try {
            op_table.emplace(key, parse_entry(kkv.second, kiln_written));
          } catch (const EntryProblem& p) {
            warn(p.mark.line >= 0 ? p.mark : kkv.first.Mark(), at_key, p.reason + " (entry skipped)");
          }
        }
      }
    }
  }
  if (kiln_written && seen != static_cast<std::size_t>(declared))
    warn(declared_node.Mark(), "entries",
         "the file says " + std::to_string(declared) + " entries but holds " + std::to_string(seen) +
             ": it was truncated or edited by hand; the valid entries are used");
  return out;
}

// ---- table -> YAML ---------------------------------------------------------------------------

// Why `table` holds something parse_yaml would not read back ("" when it reads back whole): the
// device, op and problem-key rules of the reader and entry_problem for each entry.
std::string table_problem(const TuningTable& table) {
  for (const auto& [dev, ops] : table) {
    if (dev.empty() || !is_printable_ascii(dev))
      return "device key '" + printable(dev) + "' is empty or not printable ASCII, expected a device fingerprint";
    for (const auto& [op, keys] : ops) {
      if (!is_name(op, false))
        return "devices/\"" + dev + "\": op '" + printable(op) + "' is not an op name (letters, digits and '_')";
      for (const auto& [key, e] : keys) {
        const std::string at = "devices/\"" + dev + "\"/" + op + "/\"" + printable(key) + "\"";
        if (key.empty() || !is_printable_ascii(key)) return at + ": the problem key is empty or not printable ASCII";
        if (std::string why = key_problem(key); !why.empty()) return at + ": " + why;
        if (std::string why = entry_problem(e); !why.empty()) return at + ": " + why;
      }
    }
  }
  return {};
}

// Shortest text that reads back as the same double, independent of locale and of yaml-cpp's
// emitter precision (0.7 writes 17 digits: 2701.3 would become 2701.3000000000002).
std::string format_double(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

void emit_extra(YAML::Emitter& out, const std::string& name, const std::string& yaml) {
  YAML::Node value;
  try {
    value = YAML::Load(yaml);
  } catch (const YAML::Exception&) {
    return;  // came from kept_yaml, so this does not happen; dropping beats writing garbage
  }
  out << YAML::Key << name << YAML::Value << value;
}

std::size_t count_entries(const TuningTable& table) {
  std::size_t n = 0;
  for (const auto& [dev, ops] : table)
    for (const auto& [op, keys] : ops) n += keys.size();
  return n;
}

std::string emit_yaml(const TuningTable& table, const std::vector<std::pair<std::string, std::string>>& extra_top) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  // `entries` comes first: a file cut after any line but the first is then caught (the count or
  // the schema is missing, an entry is short, or fewer entries follow).
  out << YAML::Key << "entries" << YAML::Value << count_entries(table);
  out << YAML::Key << "schema" << YAML::Value << kTuningDbSchema;
  for (const auto& [name, yaml] : extra_top) emit_extra(out, name, yaml);
  out << YAML::Key << "devices" << YAML::Value;
  if (table.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& [dev, ops] : table) {
    out << YAML::Key << YAML::DoubleQuoted << dev << YAML::Value << YAML::BeginMap;
    for (const auto& [op, entries] : ops) {
      out << YAML::Key << op << YAML::Value << YAML::BeginMap;
      for (const auto& [key, e] : entries) {
        out << YAML::Key << YAML::DoubleQuoted << key << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "variant" << YAML::Value << e.variant;
        out << YAML::Key << "config" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto& [name, value] : e.config.values()) out << YAML::Key << name << YAML::Value << value;
        out << YAML::EndMap;
        out << YAML::Key << "median_us" << YAML::Value << format_double(e.median_us);
        out << YAML::Key << "mad_us" << YAML::Value << format_double(e.mad_us);
        out << YAML::Key << "samples" << YAML::Value << e.samples;
        out << YAML::Key << "throughput" << YAML::Value << format_double(e.throughput);
        out << YAML::Key << "throughput_unit" << YAML::Value << e.throughput_unit;
        out << YAML::Key << "plugin" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << e.plugin_name;
        out << YAML::Key << "version" << YAML::Value << e.plugin_version;
        out << YAML::Key << "build" << YAML::Value << e.plugin_build;
        for (const auto& [name, yaml] : e.extra_plugin_fields) emit_extra(out, name, yaml);
        out << YAML::EndMap;
        out << YAML::Key << "tuned_at" << YAML::Value << e.tuned_at;
        if (!e.alternatives.empty()) {
          out << YAML::Key << "alternatives" << YAML::Value << YAML::BeginSeq;
          for (const TunedAlternative& a : e.alternatives) {
            std::string text = a.variant + " ";
            if (a.config.values().empty()) text += "-";
            for (std::size_t i = 0; i < a.config.values().size(); ++i)
              text += (i ? "," : "") + a.config.values()[i].first + "=" + std::to_string(a.config.values()[i].second);
            text += " " + format_double(a.median_us);
            if (!a.plugin_build.empty()) text += " " + a.plugin_build;
            out << text;
          }
          out << YAML::EndSeq;
        }
        for (const auto& [name, yaml] : e.extra_fields) emit_extra(out, name, yaml);
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
  if (!out.good()) throw TuningDbError("tuning database: cannot emit YAML: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

// ---- files -----------------------------------------------------------------------------------

// Every rewrite of a database file goes through here.  The reader refuses a file over
// kTuningDbMaxEntries entries or kTuningDbMaxFileBytes bytes, so a merge or a tuning run that
// wrote one would leave a database the next read rejects, its entries as good as lost: such a
// table is refused before anything touches the disk (no temp file), and the file stays as it was.
// The count is checked before the text is emitted, which a huge table would make slow.
//
// Every entry is held to the reader's rules too (table_problem): an entry put() refuses could
// still reach the file through update() or write_file(), and the next read then skipped it (or
// the whole device or op) with a warning: written, then lost.
void write_table(const detail::DbTarget& target, const std::string& what, const TuningTable& table,
                 const std::vector<std::pair<std::string, std::string>>& extra_top) {
  const std::size_t entries = count_entries(table);
  if (entries > kTuningDbMaxEntries)
    fail(what, "not written: it would hold " + std::to_string(entries) + " entries, more than the limit of " +
                   std::to_string(kTuningDbMaxEntries) + " for a tuning database; the file is left as it was");
  if (std::string why = table_problem(table); !why.empty())
    fail(what, "not written: " + why + "; the file is left as it was");
  const std::string text = emit_yaml(table, extra_top);
  if (text.size() > kTuningDbMaxFileBytes)
    fail(what, "not written: it would be " + std::to_string(text.size()) + " bytes, more than the limit of " +
                   std::to_string(kTuningDbMaxFileBytes) + " bytes for a tuning database; the file is left as it was");
  detail::write_db_text(target, text);
}

double lock_timeout_from_env(std::string* problem = nullptr) {
  const char* env = std::getenv("KILN_DB_LOCK_TIMEOUT");
  if (!env || !*env) return kTuningDbDefaultLockTimeoutSeconds;
  // Decimal text only, as the other number variables (tune_modes.cpp): strtod took "0x10" as 16 s.
  const bool decimal = detail::decimal_text(env);
  char* end = nullptr;
  const double v = decimal ? std::strtod(env, &end) : 0.0;
  if (!decimal || end == env || *end != '\0' || !std::isfinite(v) || v < 0.0) {
    if (problem)
      *problem = "KILN_DB_LOCK_TIMEOUT='" + detail::printable(env) + "' is not a number of seconds >= 0; a write waits " +
                 std::to_string(static_cast<int>(kTuningDbDefaultLockTimeoutSeconds)) + " s for the lock";
    return kTuningDbDefaultLockTimeoutSeconds;
  }
  return v;
}

// The user file as it is on disk now (read under the lock): empty when it does not exist.  When
// reading it skipped anything (a bad entry, a repeated key, a field that cannot be kept), the
// rewrite that follows would lose it for good, so the file as it was is first copied to
// `<file>.bak` (written like the database itself: temp file, rename) and `dropped` says so.
ParsedFile read_user_file(const detail::DbTarget& target, const std::string& what, std::string* dropped = nullptr) {
  if (!target.exists) return {};
  const std::string text = detail::read_db_text(target.path, kTuningDbMaxFileBytes, true);
  std::vector<std::string> skipped;
  ParsedFile file = parse_yaml(text, what, &skipped);
  if (!skipped.empty() && dropped != nullptr) {
    const std::string backup = target.path + ".bak";
    detail::write_db_text(detail::resolve_db_path(backup), text);
    *dropped = "tuning database '" + printable(what) + "': rewritten with only what could be read (" +
               std::to_string(skipped.size()) + " warning(s) about it); the file as it was is kept in '" +
               printable(backup) + "'";
  }
  return file;
}

// Every *.yaml entry of the directory, whatever its type: a link to nothing, a directory or a file
// that cannot be read is then reported by the load (naming it and why) like a file listed by
// name, where the scan used to leave it out without a word.
void append_yaml_files(const fs::path& dir, std::vector<std::string>& out) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".yaml") found.push_back(it->path().string());
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

double log_distance(const ParsedKey& a, const ParsedKey& b) {
  double d = 0.0;
  for (int i = 0; i < a.n_dims; ++i) {
    double x = static_cast<double>(std::max<std::int64_t>(a.dims[i], 1));
    double y = static_cast<double>(std::max<std::int64_t>(b.dims[i], 1));
    d += std::fabs(std::log2(x) - std::log2(y));
  }
  return d;
}

bool same_dtype_and_names(const ParsedKey& a, const ParsedKey& b) {
  if (a.dtype != b.dtype || a.n_dims != b.n_dims) return false;
  for (int i = 0; i < a.n_dims; ++i)
    if (a.names[i] != b.names[i]) return false;
  return true;
}

constexpr FallbackLevel kLevels[] = {FallbackLevel::exact, FallbackLevel::arch_and_sms, FallbackLevel::arch,
                                     FallbackLevel::any};

}  // namespace

// ---- TuningDb --------------------------------------------------------------------------------

TuningDb::TuningDb() : TuningDb({}, "") {}

TuningDb::TuningDb(std::vector<std::string> shipped_paths, std::string user_path)
    : shipped_paths_(std::move(shipped_paths)),
      user_path_(std::move(user_path)),
      lock_timeout_s_(lock_timeout_from_env()),
      load_mutex_(std::make_unique<std::mutex>()) {}

TuningDb::TuningDb(TuningDb&& other) noexcept
    : shipped_paths_(std::move(other.shipped_paths_)),
      user_path_(std::move(other.user_path_)),
      lock_timeout_s_(other.lock_timeout_s_),
      reporter_(std::move(other.reporter_)),
      layers_(std::move(other.layers_)),
      errors_(std::move(other.errors_)),
      warnings_(std::move(other.warnings_)),
      user_error_(std::move(other.user_error_)),
      loaded_(other.loaded_.load()),
      load_mutex_(std::make_unique<std::mutex>()) {}

TuningDb& TuningDb::operator=(TuningDb&& other) noexcept {
  shipped_paths_ = std::move(other.shipped_paths_);
  user_path_ = std::move(other.user_path_);
  lock_timeout_s_ = other.lock_timeout_s_;
  reporter_ = std::move(other.reporter_);
  layers_ = std::move(other.layers_);
  errors_ = std::move(other.errors_);
  warnings_ = std::move(other.warnings_);
  user_error_ = std::move(other.user_error_);
  loaded_.store(other.loaded_.load());
  return *this;
}

void TuningDb::set_reporter(std::function<void(const std::string&, bool)> reporter) { reporter_ = std::move(reporter); }

void TuningDb::report_dropped(const std::string& message) const {
  if (message.empty()) return;
  warnings_.push_back(message);
  if (reporter_) reporter_(message, false);
}

namespace {
// The database whose reporter this thread is running, if any (TuningDb::load_now).
thread_local const TuningDb* reporting_db = nullptr;
}  // namespace

void TuningDb::ensure_loaded() const {
  if (loaded_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(*load_mutex_);
  if (!loaded_.load(std::memory_order_relaxed)) load_now();
}

void TuningDb::load_now() const {
  layers_.clear();
  errors_.clear();
  warnings_.clear();
  user_error_.clear();
  // A mistyped KILN_DB_LOCK_TIMEOUT is reported with the database's other messages, not ignored.
  std::string env_problem;
  lock_timeout_from_env(&env_problem);
  if (!env_problem.empty()) warnings_.push_back(env_problem);
  if (!user_path_.empty()) {
    try {
      const detail::DbTarget target = detail::resolve_db_path(user_path_);
      TuningTable table;
      if (target.exists)
        table = parse_yaml(detail::read_db_text(target.path, kTuningDbMaxFileBytes, true), user_path_, &warnings_).table;
      layers_.push_back({user_path_, true, std::move(table)});
    } catch (const TuningDbError& e) {
      user_error_ = e.what();
      errors_.push_back(e.what());
    }
  }
  for (auto it = shipped_paths_.rbegin(); it != shipped_paths_.rend(); ++it) {
    try {
      layers_.push_back({*it, false, read_file(*it, &warnings_)});
    } catch (const TuningDbError& e) {
      errors_.push_back(e.what());
    }
  }
  loaded_.store(true, std::memory_order_release);
  if (reporter_) {
    // The reporter runs under load_mutex_: reload() from inside it would lock it again (it hung).
    struct Reporting {
      const TuningDb* saved = reporting_db;
      explicit Reporting(const TuningDb* db) { reporting_db = db; }
      ~Reporting() { reporting_db = saved; }
    } reporting(this);
    for (const std::string& e : errors_) reporter_(e, true);
    for (const std::string& w : warnings_) reporter_(w, false);
  }
}

void TuningDb::reload() {
  if (reporting_db == this)
    throw ArgumentError("TuningDb::reload: called from inside the database's reporter (set_reporter) while the files "
                        "are being read; expected a call after the reporter returns");
  std::lock_guard<std::mutex> lock(*load_mutex_);
  load_now();
}

const std::vector<TuningLayer>& TuningDb::layers() const {
  ensure_loaded();
  return layers_;
}

const std::vector<std::string>& TuningDb::errors() const {
  ensure_loaded();
  return errors_;
}

const std::vector<std::string>& TuningDb::warnings() const {
  ensure_loaded();
  return warnings_;
}

void TuningDb::check_writable() const {
  if (user_path_.empty())
    throw TuningDbError("tuning database: no user file is configured (set KILN_CACHE_DIR or HOME), cannot store entries");
  ensure_loaded();
  if (!user_error_.empty()) throw TuningDbError(user_error_ + " (nothing can be stored in it)");
  const detail::DbTarget target = detail::resolve_db_path(user_path_);
  detail::check_not_read_only(target, user_path_);
  for (const std::string& path : {user_path_, target.path}) {
    const std::string dir = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(user_path_, "cannot create directory '" + dir + "': " + ec.message());
    detail::check_dir_not_shared(dir, user_path_);
    if (::access(dir.c_str(), W_OK) != 0)
      fail(user_path_, "cannot write in directory '" + dir + "': " + std::error_code(errno, std::generic_category()).message());
  }
}

void TuningDb::set_lock_timeout(double seconds) {
  if (!(seconds >= 0.0))  // also NaN
    throw ArgumentError("TuningDb::set_lock_timeout: seconds is " + scalar_text(seconds) +
                        "; expected a number of seconds >= 0 (infinity waits for ever)");
  lock_timeout_s_ = seconds;
}

std::string TuningDb::default_user_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? detail::expand_home(v) : "";
  };
  if (std::string dir = env("KILN_CACHE_DIR"); !dir.empty()) return (fs::path(dir) / "tuning.yaml").string();
  // The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and ignored (taken as is, it
  // made every program using kiln write <cwd>/<it>/kiln/tuning.yaml wherever it ran).
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty() && fs::path(dir).is_absolute())
    return (fs::path(dir) / "kiln" / "tuning.yaml").string();
  if (std::string home = env("HOME"); !home.empty())
    return (fs::path(home) / ".cache" / "kiln" / "tuning.yaml").string();
  return {};  // nowhere to write: the runtime works from the shipped files only
}

std::vector<std::string> TuningDb::default_shipped_paths() {
  // One rule with KILN_PLUGIN_PATH (install_paths.hpp): unset, the installed configs; "" none;
  // an empty entry ("/my/configs:") stands for the installed directory.
  const std::string installed = detail::installed_config_dir();
  const std::vector<std::string> listed =
      detail::env_path_list("KILN_CONFIG_PATH", installed).value_or(std::vector<std::string>{installed});
  std::vector<std::string> out;
  for (const std::string& item : listed) {
    if (item.empty()) continue;  // no installed directory known
    std::error_code ec;
    if (fs::is_directory(item, ec)) append_yaml_files(item, out);
    else if (item != installed) out.push_back(item);  // a missing file is reported by the constructor
  }
  return out;
}

std::optional<TuningHit> TuningDb::lookup(const DeviceInfo& device, const std::string& op, const Problem& problem,
                                          const std::string& bucket,
                                          const std::function<bool(const TuningEntry&)>& accept,
                                          const std::function<std::string(const Problem&)>& bucket_of_key) const {
  ensure_loaded();
  const std::string key = problem.key();
  ParsedKey want;
  const bool nearest_possible = bucket_of_key && parse_problem_key(key, want);
  auto accepted = [&](const TuningEntry& e) { return !accept || accept(e); };

  for (std::size_t li = 0; li < std::size(kLevels); ++li) {
    const FallbackLevel level = kLevels[li];
    // Device keys that match here for the first time (a key matching at a more specific level
    // was already tried there).
    auto new_at_level = [&](const std::string& stored) {
      if (!fingerprint_matches(stored, device, level)) return false;
      for (std::size_t k = 0; k < li; ++k)
        if (fingerprint_matches(stored, device, kLevels[k])) return false;
      return true;
    };

    for (const TuningLayer& layer : layers_) {
      std::vector<const std::pair<const std::string, std::map<std::string, TuningEntry>>*> ops;  // (device, entries)
      std::vector<const std::string*> device_keys;
      for (const auto& [dev, op_map] : layer.table) {
        if (!new_at_level(dev)) continue;
        auto it = op_map.find(op);
        if (it == op_map.end()) continue;
        ops.push_back(&*it);
        device_keys.push_back(&dev);
      }
      if (ops.empty()) continue;

      // The exact problem key, under each matching device key in order.
      for (std::size_t d = 0; d < ops.size(); ++d) {
        const auto& entries = ops[d]->second;
        auto hit = entries.find(key);
        if (hit != entries.end() && accepted(hit->second))
          return TuningHit{hit->second, layer.path, *device_keys[d], key, level, true};
      }
      if (!nearest_possible) continue;

      // The nearest entry of the same bucket: same dtype and dim names, smallest log-distance.
      struct Candidate {
        double distance;
        const std::string* key;
        std::size_t device;
        const TuningEntry* entry;
      };
      std::vector<Candidate> candidates;
      for (std::size_t d = 0; d < ops.size(); ++d) {
        for (const auto& [stored_key, entry] : ops[d]->second) {
          if (stored_key == key) continue;  // already tried (and rejected) above
          ParsedKey pk;
          if (!parse_problem_key(stored_key, pk) || !same_dtype_and_names(pk, want)) continue;
          Problem other = problem;
          other.dtype = pk.dtype;
          other.n_dims = pk.n_dims;
          for (int i = 0; i < Problem::kMaxDims; ++i) other.dims[i] = i < pk.n_dims ? pk.dims[i] : 0;
          if (bucket_of_key(other) != bucket) continue;
          candidates.push_back({log_distance(pk, want), &stored_key, d, &entry});
        }
      }
      std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
        return std::tie(a.distance, *a.key, *device_keys[a.device]) <
               std::tie(b.distance, *b.key, *device_keys[b.device]);
      });
      for (const Candidate& c : candidates)
        if (accepted(*c.entry)) return TuningHit{*c.entry, layer.path, *device_keys[c.device], *c.key, level, false};
    }
  }
  return std::nullopt;
}

void TuningDb::set_user_layer(TuningTable table) {
  auto user = std::find_if(layers_.begin(), layers_.end(), [](const TuningLayer& l) { return l.writable; });
  if (user != layers_.end()) user->table = std::move(table);
  else layers_.insert(layers_.begin(), TuningLayer{user_path_, true, std::move(table)});
}

void TuningDb::put(const std::string& device_key, const std::string& op, const std::string& problem_key,
                   const TuningEntry& entry) {
  if (device_key.empty() || !is_printable_ascii(device_key))
    throw TuningDbError("tuning database: device key '" + printable(device_key) + "' is empty or not printable");
  if (!is_name(op, false)) throw TuningDbError("tuning database: '" + printable(op) + "' is not an op name");
  if (problem_key.empty() || !is_printable_ascii(problem_key))
    throw TuningDbError("tuning database: problem key '" + printable(problem_key) + "' is empty or not printable");
  if (std::string why = key_problem(problem_key); !why.empty()) throw TuningDbError("tuning database: " + why);
  if (std::string why = entry_problem(entry); !why.empty())
    throw TuningDbError("tuning database: not storing the entry for " + op + " " + problem_key + ": " + why);
  update([&](TuningTable& table) { table[device_key][op][problem_key] = entry; });
}

void TuningDb::update(const std::function<void(TuningTable&)>& edit) {
  if (user_path_.empty()) throw TuningDbError("tuning database: no user file is configured, cannot update it");
  ensure_loaded();
  TuningTable table;
  std::string dropped;
  {
    detail::DbLock lock(user_path_, lock_timeout_s_);
    const detail::DbTarget target = detail::resolve_db_path(user_path_);
    detail::check_not_read_only(target, user_path_);  // before a .bak copy is written
    detail::remove_stale_temp_files(target.path);
    detail::remove_stale_temp_files(target.path + ".bak");  // a killed writer of the .bak copy
    // Re-read under the lock so entries another process stored meanwhile survive.  A corrupt file
    // throws here, before anything is written; entries that are invalid are dropped (the old file
    // is kept as <file>.bak first).
    ParsedFile file = read_user_file(target, user_path_, &dropped);
    if (edit) edit(file.table);
    write_table(target, user_path_, file.table, file.extra_top);
    table = std::move(file.table);
  }
  set_user_layer(std::move(table));
  report_dropped(dropped);
}

std::size_t TuningDb::prune(const std::function<bool(const std::string& device, const std::string& op,
                                                     const std::string& key, const TuningEntry&)>& drop) {
  if (user_path_.empty() || !drop) return 0;
  ensure_loaded();
  std::size_t removed = 0;
  TuningTable table;
  std::string dropped;
  {
    detail::DbLock lock(user_path_, lock_timeout_s_);
    const detail::DbTarget target = detail::resolve_db_path(user_path_);
    detail::check_not_read_only(target, user_path_);  // before a .bak copy is written
    detail::remove_stale_temp_files(target.path);
    detail::remove_stale_temp_files(target.path + ".bak");  // a killed writer of the .bak copy
    ParsedFile file = read_user_file(target, user_path_, &dropped);
    for (auto dev = file.table.begin(); dev != file.table.end();) {
      for (auto o = dev->second.begin(); o != dev->second.end();) {
        for (auto k = o->second.begin(); k != o->second.end();) {
          if (drop(dev->first, o->first, k->first, k->second)) {
            k = o->second.erase(k);
            ++removed;
          } else {
            ++k;
          }
        }
        o = o->second.empty() ? dev->second.erase(o) : std::next(o);
      }
      dev = dev->second.empty() ? file.table.erase(dev) : std::next(dev);
    }
    if (removed > 0) write_table(target, user_path_, file.table, file.extra_top);
    else dropped.clear();  // nothing rewritten, nothing lost (the .bak copy is harmless)
    table = std::move(file.table);
  }
  set_user_layer(std::move(table));
  report_dropped(dropped);
  return removed;
}

TuningTable TuningDb::read_file(const std::string& path, std::vector<std::string>* warnings) {
  return parse_yaml(detail::read_db_text(path, kTuningDbMaxFileBytes, false), path, warnings).table;
}

void TuningDb::write_file(const std::string& path, const TuningTable& table) {
  write_table(detail::resolve_db_path(path), path, table, {});
}

std::string TuningDb::to_yaml(const TuningTable& table) { return emit_yaml(table, {}); }

TuningTable TuningDb::from_yaml(const std::string& text, const std::string& what, std::vector<std::string>* warnings) {
  return parse_yaml(text, what, warnings).table;
}

std::size_t merge_tables(TuningTable& into, const TuningTable& from, bool prefer_newer) {
  std::size_t changed = 0;
  for (const auto& [dev, ops] : from) {
    for (const auto& [op, entries] : ops) {
      auto& target = into[dev][op];
      for (const auto& [key, entry] : entries) {
        auto it = target.find(key);
        if (it == target.end()) {
          target.emplace(key, entry);
          ++changed;
          continue;
        }
        if (it->second == entry) continue;
        // Times, not strings: an offset or a word in tuned_at must not decide (tuned_later).
        bool take = prefer_newer ? detail::tuned_later(entry.tuned_at, it->second.tuned_at)
                                 : entry.median_us < it->second.median_us;
        if (take) {
          it->second = entry;
          ++changed;
        }
      }
    }
  }
  return changed;
}

}  // namespace kiln
