// The `--csv` writer (tuner/cli/csv.cpp): whatever text a plugin or a driver names a variant, a
// config or a device, every row stays one row of the same fields, and no field is a formula to a
// spreadsheet.
#include <cmath>
#include <string>
#include <vector>

#include "catch.hpp"
#include "csv.hpp"

using kiln::cli::csv_field;
using kiln::cli::csv_number;
using kiln::cli::csv_row;

namespace {

// An independent RFC 4180 reader: one row (no trailing newline handling needed beyond the last).
std::vector<std::string> parse_row(const std::string& line, std::size_t* consumed) {
  std::vector<std::string> fields;
  std::string cur;
  std::size_t i = 0;
  bool quoted = false, field_start = true;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"' && field_start) {
      quoted = true;
      field_start = false;
    } else if (c == ',') {
      fields.push_back(cur), cur.clear(), field_start = true;
    } else if (c == '\n') {
      ++i;
      break;
    } else {
      cur += c;
      field_start = false;
    }
  }
  fields.push_back(cur);
  *consumed = i;
  return fields;
}

// What a spreadsheet would see as the start of a cell: a formula unless it begins with '.
bool runs_as_formula(const std::string& cell) {
  if (cell.empty()) return false;
  const char c = cell[0];
  return c == '=' || c == '+' || c == '@' || c == '\t' || c == '\r' ||
         (c == '-' && cell.find_first_not_of("-0123456789.eE+") != std::string::npos);
}

}  // namespace

TEST_CASE("csv: fields that a spreadsheet would run are quoted as text") {
  CHECK(csv_field("=1+1") == "\"'=1+1\"");
  CHECK(csv_field("+cmd|' /C calc'!A0") == "\"'+cmd|' /C calc'!A0\"");
  CHECK(csv_field("-2+3") == "\"'-2+3\"");
  CHECK(csv_field("@SUM(A1:A2)") == "\"'@SUM(A1:A2)\"");
  CHECK(csv_field("\t=1") == "\"'\t=1\"");
  CHECK(csv_field("\r=1") == "\"'\r=1\"");
  CHECK(csv_field("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  // Plain numbers stay numbers, and ordinary names stay as they are.
  CHECK(csv_field("-1.5") == "-1.5");
  CHECK(csv_field("+3e-07") == "+3e-07");
  CHECK(csv_field("12") == "12");
  CHECK(csv_field("gemm_tiled") == "gemm_tiled");
  CHECK(csv_field("BM=128 BN=128") == "BM=128 BN=128");
  CHECK(csv_field("f32|m=4096|n=4096") == "f32|m=4096|n=4096");
  CHECK(csv_field("") == "");
  CHECK(csv_field("-") == "\"'-\"");
  CHECK(csv_field("-1e") == "\"'-1e\"");
}

TEST_CASE("csv: separators, quotes and control characters are quoted") {
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\rhere") == "\"cr\rhere\"");
  CHECK(csv_field("tab\there") == "\"tab\there\"");
  CHECK(csv_field("esc\x1b[31m") == "\"esc\x1b[31m\"");
  CHECK(csv_field(std::string("nul\0x", 5)) == std::string("\"nul\0x\"", 7));
  CHECK(csv_field("del\x7f") == "\"del\x7f\"");
}

TEST_CASE("csv: every row reads back as the fields written, none a formula") {
  const std::vector<std::string> hostile = {
      "=1+1", "-2+3", "+x", "@y", "\t=z", "a,b", "\"q\"", "l1\nl2", "l1\r\nl2", "\x1b]0;title\x07", "", "-1.5",
      "caf\xc3\xa9", ",", "\"", "\n", "=", "'already'", "x\"y,z\nw"};
  std::string doc;
  for (const std::string& h : hostile) doc += csv_row({"op", h, "tail"});
  std::size_t pos = 0;
  for (const std::string& h : hostile) {
    INFO("field " << h);
    std::size_t used = 0;
    const std::vector<std::string> fields = parse_row(doc.substr(pos), &used);
    pos += used;
    REQUIRE(fields.size() == 3);
    CHECK(fields[0] == "op");
    CHECK(fields[2] == "tail");
    CHECK_FALSE(runs_as_formula(fields[1]));
    // The text is kept: as written, or behind the one ' that keeps it text.
    CHECK((fields[1] == h || fields[1] == "'" + h));
  }
  CHECK(pos == doc.size());
}

TEST_CASE("csv: numbers") {
  CHECK(csv_number(12.5) == "12.5");
  CHECK(csv_number(0.0) == "0");
  CHECK(csv_number(std::nan("")) == "");
  CHECK(csv_number(-HUGE_VAL) == "");
}
