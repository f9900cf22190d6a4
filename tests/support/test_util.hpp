// Helpers every test file wanted: a Runtime configuration that touches nothing outside the test
// (no plugin loading, no user or shipped database, no lazy tuning), and error-message checks.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>

namespace kiln_test {

// Options for a Runtime built from a registry filled in code.
inline kiln::RuntimeOptions offline_options(const std::string& user_db = "", std::vector<std::string> shipped = {}) {
  kiln::RuntimeOptions o;
  o.load_plugins = false;
  o.use_default_db_paths = false;
  o.user_db_path = user_db;
  o.shipped_db_paths = std::move(shipped);
  o.tune_mode = "off";
  return o;
}

// The message of the kiln::Error `f` throws, or "" when it throws nothing.
inline std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace kiln_test
