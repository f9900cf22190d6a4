#include "table.hpp"

#include <algorithm>

#include "terminal.hpp"

namespace kiln::cli {

std::size_t display_width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

std::string truncate_to_width(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  if (width == 0) return {};
  std::string out;
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (w + 1 == width) break;  // the last column is the ellipsis
      ++w;
    }
    out += s[i];
  }
  return out + "\xE2\x80\xA6";  // U+2026 "…"
}

std::string wrap_text(const std::string& text, const std::string& indent, std::size_t columns) {
  if (columns == 0 || display_width(indent) + display_width(text) <= columns) return indent + text + "\n";
  std::string out, line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && display_width(indent) + display_width(line) + 1 + display_width(word) > columns) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::left);
  if (!headers_.empty()) flexible_ = {headers_.size() - 1};
}

void Table::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out, const std::string& indent) const { print(out, indent, output_columns()); }

void Table::print(std::ostream& out, const std::string& indent, std::size_t max_width) const {
  std::vector<std::size_t> w(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) w[c] = display_width(headers_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], display_width(row[c]));
  // Too wide: the flexible columns shrink (not below their header or 8 columns), then, if that
  // is not enough, they are left out in the same order and a footnote names them.
  std::vector<bool> shown(w.size(), true);
  std::vector<std::string> hidden;
  if (max_width > 0 && !w.empty()) {
    std::size_t total = display_width(indent) + 2 * (w.size() - 1);
    for (std::size_t x : w) total += x;
    for (std::size_t c : flexible_) {
      if (total <= max_width || c >= w.size()) break;
      const std::size_t floor = std::min(w[c], std::max<std::size_t>(display_width(headers_[c]), 8));
      const std::size_t give = std::min(total - max_width, w[c] - floor);
      w[c] -= give;
      total -= give;
    }
    for (std::size_t c : flexible_) {
      if (total <= max_width || c >= w.size()) break;
      shown[c] = false;
      hidden.push_back(headers_[c]);
      total -= w[c] + 2;
    }
  }
  std::size_t last_shown = 0;
  for (std::size_t c = 0; c < w.size(); ++c)
    if (shown[c]) last_shown = c;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (!shown[c]) continue;
      const std::string cell = truncate_to_width(cells[c], w[c]);
      const std::size_t pad = w[c] - display_width(cell);
      const bool last = c == last_shown;
      if (align_[c] == Align::right) s.append(pad, ' ');
      s += cell;
      if (align_[c] == Align::left && !last) s.append(pad, ' ');
      if (!last) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(headers_);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < headers_.size(); ++c) rule.emplace_back(w[c], '-');
  line(rule);
  for (const auto& row : rows_) line(row);
  if (!hidden.empty()) {
    std::string names;
    for (const std::string& h : hidden) names += (names.empty() ? "" : ", ") + h;
    out << wrap_text("(" + names + " left out to fit " + std::to_string(max_width) + " columns; --wide shows them)",
                     indent, max_width);
  }
}

}  // namespace kiln::cli
