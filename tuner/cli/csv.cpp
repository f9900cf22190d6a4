#include "csv.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace kiln::cli {

namespace {

// "12", "-1.5", "+3e-07": what csv_number and std::to_string print, and nothing else.
bool is_plain_number(const std::string& v) {
  std::size_t i = 0;
  if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
  std::size_t digits = 0;
  for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) ++digits;
  if (i < v.size() && v[i] == '.')
    for (++i; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) ++digits;
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == v.size();
}

// A spreadsheet runs a cell that starts with = + - @ as a formula (and some strip a leading tab or
// carriage return first): a variant, device or config name from a plugin or a driver must not.
bool starts_like_formula(const std::string& v) {
  if (v.empty()) return false;
  const char c = v[0];
  return (c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r') && !is_plain_number(v);
}

bool has_control(const std::string& v) {
  for (unsigned char c : v)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

std::string csv_field(const std::string& value) {
  const bool formula = starts_like_formula(value);
  if (!formula && value.find_first_of(",\"") == std::string::npos && !has_control(value)) return value;
  // A leading ' makes a spreadsheet show the text as text (OWASP's advice for CSV injection).
  std::string out = formula ? "\"'" : "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

}  // namespace kiln::cli
