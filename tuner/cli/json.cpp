#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln::cli {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, surrogates or
// code points above U+10FFFF), or 0; `bad_len` is then how many bytes to replace by one U+FFFD
// (the lead byte and the continuation bytes that still fitted it, as Unicode recommends).
std::size_t utf8_length(const std::string& s, std::size_t i, std::size_t& bad_len, unsigned& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t need = 0;
  unsigned lo = 0x80, hi = 0xbf;
  if (c < 0x80) {
    code = c;
    return 1;
  } else if (c >= 0xc2 && c <= 0xdf) {
    need = 1;
    code = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 2;
    code = c & 0x0f;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 3;
    code = c & 0x07;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    bad_len = 1;
    return 0;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size() || byte(i + k) < (k == 1 ? lo : 0x80) || byte(i + k) > (k == 1 ? hi : 0xbf)) {
      bad_len = k;
      return 0;
    }
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  return need + 1;
}

// Always valid JSON and valid UTF-8, whatever the bytes (database files and device names are not
// ours): control characters (C0, DEL, C1) and the JavaScript line separators are escaped, and
// bytes that are not UTF-8 become U+FFFD.
void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    std::size_t bad = 0;
    unsigned code = 0;
    const std::size_t len = utf8_length(s, i, bad, code);
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      i += bad;
      continue;
    }
    switch (code) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code == 0x2028 || code == 0x2029) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", code);
          out += buf;
        } else {
          out.append(s, i, len);
        }
    }
    i += len;
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
