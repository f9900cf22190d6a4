// CSV for `kiln bench --csv` and `kiln tune --csv` (RFC 4180: a field with a comma, a quote or a
// line break is quoted, quotes doubled), for spreadsheets and pandas.
//
//   std::cout << kiln::cli::csv_row({"variant", "median_us"}) << kiln::cli::csv_row({"gemm_tiled", "12.5"});
#pragma once
#include <string>
#include <vector>

namespace kiln::cli {

std::string csv_field(const std::string& value);
// The fields joined by commas, ending with "\n".
std::string csv_row(const std::vector<std::string>& fields);
// A number as CSV text: shortest round-trip form ("12.5"), "" for NaN and infinities.
std::string csv_number(double value);

}  // namespace kiln::cli
