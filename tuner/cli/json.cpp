#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln::cli {
namespace {

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void newline(std::string& out, int indent, int depth) {
  if (indent <= 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

}  // namespace

Json& Json::push(Json v) {
  kind_ = Kind::array;
  items_.push_back(std::move(v));
  return *this;
}

Json& Json::set(const std::string& key, Json v) {
  kind_ = Kind::object;
  for (auto& kv : fields_)
    if (kv.first == key) {
      kv.second = std::move(v);
      return *this;
    }
  fields_.emplace_back(key, std::move(v));
  return *this;
}

std::string Json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Json::write(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::null: out += "null"; break;
    case Kind::boolean: out += bool_ ? "true" : "false"; break;
    case Kind::integer: out += std::to_string(int_); break;
    case Kind::number: {
      if (!std::isfinite(num_)) {
        out += "null";
        break;
      }
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", num_);
      // Shortest form that reads back the same.
      for (int p = 1; p <= 17; ++p) {
        char b2[40];
        std::snprintf(b2, sizeof b2, "%.*g", p, num_);
        if (std::strtod(b2, nullptr) == num_) {
          out += b2;
          return;
        }
      }
      out += buf;
      break;
    }
    case Kind::string: write_string(out, str_); break;
    case Kind::raw:
      // Re-indented to its depth (JSON strings hold no raw newlines, so every newline is layout).
      for (char c : str_) {
        out += c;
        if (c == '\n' && indent > 0) out.append(static_cast<std::size_t>(indent * depth), ' ');
      }
      break;
    case Kind::array:
      if (items_.empty()) {
        out += "[]";
        break;
      }
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        newline(out, indent, depth + 1);
        items_[i].write(out, indent, depth + 1);
      }
      newline(out, indent, depth);
      out += ']';
      break;
    case Kind::object:
      if (fields_.empty()) {
        out += "{}";
        break;
      }
      out += '{';
      for (std::size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ',';
        newline(out, indent, depth + 1);
        write_string(out, fields_[i].first);
        out += indent > 0 ? ": " : ":";
        fields_[i].second.write(out, indent, depth + 1);
      }
      newline(out, indent, depth);
      out += '}';
      break;
  }
}

}  // namespace kiln::cli
