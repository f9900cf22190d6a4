// Plain-text tables for the CLI's human-readable output (`--json` gives the same data as JSON).
//
//   kiln::cli::Table t({"variant", "config", "median"}, {kiln::cli::Align::left, kiln::cli::Align::left,
//                                                       kiln::cli::Align::right});
//   t.add({"gemm_tiled", "tile=32", "2701.30 us"});
//   t.print(std::cout);
#pragma once
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
  // Columns separated by two spaces, a dashed rule under the header, `indent` before each line.
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kiln::cli
