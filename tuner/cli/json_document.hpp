// The top level of every `kiln ... --json` document: an object that starts with
// "schema_version", so scripts can tell when the layout changes.  Bumped on a change that
// removes or renames a field or changes its type; new fields do not bump it.
//
//   std::cout << kiln::cli::json_document().set("op", "gemm").dump() << "\n";
#pragma once
#include "json.hpp"

namespace kiln {
class Config;
}

namespace kiln::cli {

inline constexpr int kJsonSchemaVersion = 2;  // 2: schema_version, config objects, dtype lists

inline Json json_document() { return Json::object().set("schema_version", kJsonSchemaVersion); }

// A config as an object of its named values ({"BM": 128, "BN": 128}); {} when it has none.
Json config_json(const Config& config);

// An error as a --json document: {"schema_version": 2, "error": {"kind": "usage", "message": ...}}.
Json error_document(const std::string& kind, const std::string& message);

}  // namespace kiln::cli
