// Registry: op schemas and variants, with where each came from.  Plugins fill it through their
// register function; tests fill it directly:
//
//   kiln::Status register_elementwise(kiln::Registry& r) noexcept;   // a plugin's register function
//   kiln::Registry reg;
//   register_elementwise(reg).throw_if_error("elementwise");       // no library load
//   kiln::RuntimeOptions opts;
//   opts.load_plugins = false;
//   kiln::Runtime rt(std::move(reg), opts);
//
// Names are unique: a second op or variant of the same name is refused with an error naming both
// sources.  The registry is read-only once a Runtime owns it.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/op_schema.hpp"
#include "kiln/variant.hpp"

namespace kiln {

// Where a schema or variant came from: a plugin (with the file it was loaded from) or direct.
struct Source {
  std::string plugin = "direct";  // plugin name, or "direct" for registration in code
  std::string version;
  std::string build_id;
  std::string file;               // the shared library, empty for direct registration
  std::string to_string() const;  // "plugin gemm 0.1.0 (build 3f9c2a1) from /x/libkiln_gemm.so"
};

class Registry {
 public:
  Registry() = default;
  Registry(Registry&&) noexcept = default;
  Registry& operator=(Registry&&) noexcept = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Throw RegistryError on a duplicate name (naming both sources) or an incomplete schema.
  void add_op(std::shared_ptr<const OpSchema> schema, Source source = {});
  void add_variant(std::shared_ptr<const Variant> variant, Source source = {});
  // Moves everything from `staged` in, all or nothing: if any name clashes, nothing is added and
  // RegistryError names the clashes.  `keep_alive` (a loaded library) is held by every entry,
  // so the library stays loaded while any of its schemas or variants is referenced.
  void merge(Registry&& staged, const Source& source, std::shared_ptr<void> keep_alive = nullptr);
  // Like merge, but names already registered stay with their first owner: each clashing schema or
  // variant of `staged` is left out and described in the returned list (naming both sources),
  // and everything else is added.
  std::vector<std::string> merge_keeping_existing(Registry&& staged, const Source& source,
                                                  std::shared_ptr<void> keep_alive = nullptr);
  // Sets the source of every entry that still has the default one (used by the plugin loader).
  void stamp_source(const Source& source);

  const OpSchema* find_op(const std::string& name) const;       // nullptr when absent
  const OpSchema& op(const std::string& name) const;            // throws UnknownOpError listing ops
  const Variant* find_variant(const std::string& name) const;   // nullptr when absent
  // Variants of `op` in priority order (higher first, then by name).
  std::vector<const Variant*> variants(const std::string& op) const;
  std::vector<const Variant*> all_variants() const;
  std::vector<std::string> op_names() const;
  const Source& source_of(const Variant& v) const;
  const Source& source_of(const OpSchema& s) const;
  // Variants whose op has no schema (e.g. a vendor plugin loaded without the family plugin).
  std::vector<std::string> orphan_variants() const;
  // Shared ownership of a variant (keeps its plugin library loaded); nullptr when absent.
  std::shared_ptr<const Variant> share_variant(const std::string& name) const;

 private:
  struct OpEntry {
    std::shared_ptr<const OpSchema> schema;
    Source source;
  };
  struct VariantEntry {
    std::shared_ptr<const Variant> variant;
    Source source;
  };
  std::map<std::string, OpEntry> ops_;
  std::map<std::string, VariantEntry> variants_;
};

}  // namespace kiln
