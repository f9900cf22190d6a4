#include "kiln/registry.hpp"

#include <algorithm>
#include <set>

#include "spelling.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln {

std::string Source::to_string() const {
  if (plugin == "direct" && file.empty()) return "direct registration";
  std::string s = "plugin " + plugin;
  if (!version.empty()) s += " " + version;
  if (!build_id.empty()) s += " (build " + build_id + ")";
  if (!file.empty()) s += " from " + file;
  return s;
}

namespace {

void check_schema(const OpSchema& s, const Source& source) {
  std::string missing;
  if (s.name.empty()) missing += " name";
  if (s.tensors.empty()) missing += " tensors";
  if (!s.make_problem) missing += " make_problem";
  if (!s.tensor_specs) missing += " tensor_specs";
  if (!s.reference) missing += " reference";
  if (!s.work) missing += " work";
  if (static_cast<int>(s.dim_names.size()) > Problem::kMaxDims) missing += " (too many dims)";
  if (!missing.empty())
    throw RegistryError("op schema '" + detail::printable(s.name) + "' from " + source.to_string() + " is incomplete:" + missing);
  // Names go into the tuning database's keys ("gemm", "f32|m=64|n=64"): one it cannot store (a
  // space, '|', '=', a control character) or a dim given twice let `kiln tune` search for minutes
  // and then refuse to store the result, and `kiln explain` never find an entry.
  const std::string head = "op schema '" + detail::printable(s.name) + "' from " + source.to_string();
  if (!detail::is_db_name(s.name, false))
    throw RegistryError(head + ": the op name must be letters, digits and '_' (the tuning database's op keys)");
  for (std::size_t i = 0; i < s.dim_names.size(); ++i) {
    if (!detail::is_db_name(s.dim_names[i], false))
      throw RegistryError(head + ": dim name '" + detail::printable(s.dim_names[i]) +
                          "' must be letters, digits and '_' (problem keys are dtype|name=value|...)");
    for (std::size_t j = 0; j < i; ++j)
      if (s.dim_names[j] == s.dim_names[i])
        throw RegistryError(head + ": dim name '" + s.dim_names[i] + "' is given twice");
  }
}

// Each entry made by a loaded library owns a reference to it, so the library stays loaded while
// any schema or variant from it is alive (also outside the registry); the entry is destroyed
// before the library is unloaded.
template <class T>
std::shared_ptr<const T> hold(std::shared_ptr<const T> object, const std::shared_ptr<void>& library) {
  if (!library) return object;
  struct Holder {
    std::shared_ptr<void> library;     // destroyed last
    std::shared_ptr<const T> object;
  };
  const T* raw = object.get();
  auto holder = std::make_shared<Holder>(Holder{library, std::move(object)});
  return std::shared_ptr<const T>(holder, raw);
}

}  // namespace

void Registry::add_op(std::shared_ptr<const OpSchema> schema, Source source) {
  if (!schema) throw RegistryError("add_op: null schema from " + source.to_string());
  check_schema(*schema, source);
  const std::string name = schema->name;  // copied: the schema pointer is moved below
  auto it = ops_.find(name);
  if (it != ops_.end())
    throw RegistryError("op '" + name + "' registered twice: by " + it->second.source.to_string() + " and by " +
                        source.to_string());
  ops_.emplace(name, OpEntry{std::move(schema), std::move(source)});
}

void Registry::add_variant(std::shared_ptr<const Variant> variant, Source source) {
  if (!variant) throw RegistryError("add_variant: null variant from " + source.to_string());
  if (variant->name().empty() || variant->op().empty())
    throw RegistryError("add_variant: a variant from " + source.to_string() + " has an empty name or op");
  // The tuning database stores the variant's name in every entry it wins: one it cannot store
  // (a space, a control character) was tuned and then refused by the database.
  if (!detail::is_db_name(variant->name(), true))
    throw RegistryError("add_variant: variant '" + detail::printable(variant->name()) + "' from " + source.to_string() +
                        ": the name must be letters, digits, '_', '.' and '-' (the tuning database stores it)");
  const std::string name = variant->name();  // copied: the variant pointer is moved below
  auto it = variants_.find(name);
  if (it != variants_.end())
    throw RegistryError("variant '" + name + "' registered twice: by " + it->second.source.to_string() + " and by " +
                        source.to_string());
  variants_.emplace(name, VariantEntry{std::move(variant), std::move(source)});
}

void Registry::merge(Registry&& staged, const Source& source, std::shared_ptr<void> keep_alive) {
  std::string clashes;
  for (const auto& [name, e] : staged.ops_)
    if (ops_.count(name)) clashes += "\n  op '" + name + "' already registered by " + ops_.at(name).source.to_string();
  for (const auto& [name, e] : staged.variants_)
    if (variants_.count(name))
      clashes += "\n  variant '" + name + "' already registered by " + variants_.at(name).source.to_string();
  if (!clashes.empty()) throw RegistryError(source.to_string() + " clashes with loaded names:" + clashes);
  for (auto& [name, e] : staged.ops_) ops_.emplace(name, OpEntry{hold(std::move(e.schema), keep_alive), source});
  for (auto& [name, e] : staged.variants_)
    variants_.emplace(name, VariantEntry{hold(std::move(e.variant), keep_alive), source});
  staged.ops_.clear();
  staged.variants_.clear();
}

std::vector<std::string> Registry::merge_keeping_existing(Registry&& staged, const Source& source,
                                                          std::shared_ptr<void> keep_alive) {
  std::vector<std::string> refused;
  for (auto& [name, e] : staged.ops_) {
    auto it = ops_.find(name);
    if (it != ops_.end()) {
      refused.push_back("op '" + name + "' is already registered by " + it->second.source.to_string() +
                        "; the one from " + source.to_string() + " is ignored");
      continue;
    }
    ops_.emplace(name, OpEntry{hold(std::move(e.schema), keep_alive), source});
  }
  for (auto& [name, e] : staged.variants_) {
    auto it = variants_.find(name);
    if (it != variants_.end()) {
      refused.push_back("variant '" + name + "' is already registered by " + it->second.source.to_string() +
                        "; the one from " + source.to_string() + " is ignored");
      continue;
    }
    variants_.emplace(name, VariantEntry{hold(std::move(e.variant), keep_alive), source});
  }
  staged.ops_.clear();
  staged.variants_.clear();
  return refused;
}

void Registry::stamp_source(const Source& source) {
  for (auto& [name, e] : ops_)
    if (e.source.plugin == "direct" && e.source.file.empty()) e.source = source;
  for (auto& [name, e] : variants_)
    if (e.source.plugin == "direct" && e.source.file.empty()) e.source = source;
}

const OpSchema* Registry::find_op(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.schema.get();
}

const OpSchema& Registry::op(const std::string& name) const {
  if (const OpSchema* s = find_op(name)) return *s;
  std::string known;
  std::vector<std::string> names;
  for (const auto& [n, e] : ops_) {
    known += (known.empty() ? "" : ", ") + n;
    names.push_back(n);
  }
  const std::string guess = detail::did_you_mean(name, names);  // "; did you mean 'gemm'?"
  throw UnknownOpError("unknown op '" + detail::printable(name) + "'" + guess + (guess.empty() ? "; known ops: " : " Known ops: ") +
                       (known.empty() ? "(none: no plugin loaded?)" : known));
}

const Variant* Registry::find_variant(const std::string& name) const {
  auto it = variants_.find(name);
  return it == variants_.end() ? nullptr : it->second.variant.get();
}

std::vector<const Variant*> Registry::variants(const std::string& op) const {
  std::vector<const Variant*> out;
  for (const auto& [name, e] : variants_)
    if (e.variant->op() == op) out.push_back(e.variant.get());
  std::stable_sort(out.begin(), out.end(), [](const Variant* a, const Variant* b) {
    if (a->priority() != b->priority()) return a->priority() > b->priority();
    return a->name() < b->name();
  });
  return out;
}

std::vector<const Variant*> Registry::all_variants() const {
  std::vector<const Variant*> out;
  for (const auto& [name, e] : variants_) out.push_back(e.variant.get());
  return out;
}

std::vector<std::string> Registry::op_names() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : ops_) out.push_back(name);
  return out;
}

const Source& Registry::source_of(const Variant& v) const {
  auto it = variants_.find(v.name());
  if (it == variants_.end()) throw RegistryError("variant '" + v.name() + "' is not in this registry");
  return it->second.source;
}

const Source& Registry::source_of(const OpSchema& s) const {
  auto it = ops_.find(s.name);
  if (it == ops_.end()) throw RegistryError("op '" + s.name + "' is not in this registry");
  return it->second.source;
}

std::vector<std::string> Registry::orphan_variants() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : variants_)
    if (!ops_.count(e.variant->op())) out.push_back(name + " (op '" + e.variant->op() + "' has no schema)");
  return out;
}

std::shared_ptr<const Variant> Registry::share_variant(const std::string& name) const {
  auto it = variants_.find(name);
  return it == variants_.end() ? nullptr : it->second.variant;
}

}  // namespace kiln
