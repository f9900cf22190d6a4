// Plain-text tables for the CLI's human-readable output (`--json` gives the same data as JSON).
//
//   kiln::cli::Table t({"variant", "config", "median"}, {kiln::cli::Align::left, kiln::cli::Align::left,
//                                                       kiln::cli::Align::right});
//   t.add({"gemm_tiled", "tile=32", "2701.30 us"});
//   t.print(std::cout);
//
// A table fits the terminal (output_columns(), terminal.hpp): when it is too wide, its flexible
// columns (by default the last one) are shortened and their cells end in "…", or, when that is
// not enough, left out with a footnote; `kiln ... --wide` prints every cell in full.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::cli {

enum class Align { left, right };

class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});
  void add(std::vector<std::string> row);   // missing cells print empty
  bool empty() const { return rows_.empty(); }
  // The columns that may be shortened to fit, in the order they give up width; {} for none.
  void set_flexible(std::vector<std::size_t> columns) { flexible_ = std::move(columns); }
  // Columns separated by two spaces, a dashed rule under the header, `indent` before each line,
  // fitted to output_columns().
  void print(std::ostream& out, const std::string& indent = "") const;
  // The same, fitted to `max_width` columns (0: no limit).
  void print(std::ostream& out, const std::string& indent, std::size_t max_width) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> flexible_;
};

// Display width: UTF-8 continuation bytes take no column.
std::size_t display_width(const std::string& s);
// `s` cut to at most `width` columns, ending in "…" when it was cut.
std::string truncate_to_width(const std::string& s, std::size_t width);
// `text` as lines of at most `columns` columns (0: one line), each starting with `indent`, broken
// at spaces (a word longer than a line keeps its own line); ends with a newline.
std::string wrap_text(const std::string& text, const std::string& indent, std::size_t columns);

}  // namespace kiln::cli
