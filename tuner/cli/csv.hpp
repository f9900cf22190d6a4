// CSV for `kiln bench --csv` and `kiln tune --csv` (RFC 4180: a field with a comma, a quote, a line
// break or another control character is quoted, quotes doubled), for spreadsheets and pandas.  A
// field that a spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage
// return, and is not a plain number such as -1.5) is quoted with a leading ' so it stays text.
//
//   std::cout << kiln::cli::csv_row({"variant", "median_us"}) << kiln::cli::csv_row({"gemm_tiled", "12.5"});
#pragma once
#include <string>
#include <vector>

namespace kiln::cli {

// One field: "gemm_tiled" as is, "a,b" as "\"a,b\"", "=1+1" as "\"'=1+1\"", "-1.5" as is.
std::string csv_field(const std::string& value);
// The fields joined by commas, ending with "\n".
std::string csv_row(const std::vector<std::string>& fields);
// A number as CSV text: shortest round-trip form ("12.5"), "" for NaN and infinities.
std::string csv_number(double value);

}  // namespace kiln::cli
