// A small JSON value for `--json` output (objects keep insertion order).  dump() is always valid
// JSON in valid UTF-8: strings are escaped, and bytes that are not UTF-8 become U+FFFD.
//
//   kiln::cli::Json j = kiln::cli::Json::object();
//   j.set("op", "gemm").set("median_us", 2701.3);
//   std::cout << j.dump() << "\n";
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::cli {

class Json {
 public:
  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::boolean), bool_(b) {}
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
  Json(T v) : kind_(Kind::integer), int_(static_cast<long long>(v)) {}
  Json(double v) : kind_(Kind::number), num_(v) {}
  Json(const char* s) : kind_(Kind::string), str_(s) {}
  Json(std::string s) : kind_(Kind::string), str_(std::move(s)) {}

  static Json array() { Json j; j.kind_ = Kind::array; return j; }
  static Json object() { Json j; j.kind_ = Kind::object; return j; }
  // JSON text written elsewhere (a worker process's report, dumped at depth 0), inserted as it
  // is, its lines indented to where it lands.
  static Json raw(std::string json_text) { Json j; j.kind_ = Kind::raw; j.str_ = std::move(json_text); return j; }

  Json& push(Json v);                           // on an array
  Json& set(const std::string& key, Json v);    // on an object; replaces an existing key
  bool empty() const { return items_.empty() && fields_.empty(); }
  std::string dump(int indent = 2) const;       // NaN and infinities print as null

 private:
  enum class Kind { null, boolean, integer, number, string, array, object, raw };
  void write(std::string& out, int indent, int depth) const;
  Kind kind_ = Kind::null;
  bool bool_ = false;
  long long int_ = 0;
  double num_ = 0.0;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> fields_;
};

}  // namespace kiln::cli
