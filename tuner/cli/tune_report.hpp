// Printing tuning results: the human-readable block of `kiln tune` and its JSON form.
#pragma once
#include <ostream>

#include <kiln/tuner/tuner.hpp>

#include "json.hpp"

namespace kiln::cli {

Json candidate_json(const CandidateResult& r, const Problem& problem);
Json tune_report_json(const TuneReport& report);
// `kiln tune --csv`: the header, and one row per evaluated candidate of a report.
void print_tune_csv_header(std::ostream& out);
void print_tune_csv_rows(std::ostream& out, const TuneReport& report);
void print_tune_report(std::ostream& out, const TuneReport& report, bool verbose);

}  // namespace kiln::cli
