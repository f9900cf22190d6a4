#include "table.hpp"

#include <algorithm>

namespace kiln::cli {
namespace {

// Display width: UTF-8 continuation bytes take no column.
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

}  // namespace

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::left);
}

void Table::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> w(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) w[c] = width(headers_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], width(row[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = w[c] - width(cells[c]);
      const bool last = c + 1 == cells.size();
      if (align_[c] == Align::right) s.append(pad, ' ');
      s += cells[c];
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
}

}  // namespace kiln::cli
