// Tuning plans: many problems for one `kiln tune --plan FILE` run, in YAML —
//
//   strategy: exhaustive          # optional defaults for every problem
//   budget_evals: 200
//   budget_seconds: 60
//   problems:
//     - {op: gemm, dtype: f32, shape: 4096x4096x4096}
//     - {op: topk, shape: "rows=64,n=1048576,k=64,largest=1", strategy: anneal, budget_evals: 30}
//
// — and problem lists written by KILN_TUNE=record, one problem per line
// ("gemm f32 m=4096,n=4096,k=4096,tf32=0 cuda:0"), read back by `kiln tune --from FILE`.
//
//   kiln::Plan plan = kiln::load_plan(kiln::find_plan("default"));
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kiln/dtype.hpp"
#include "kiln/problem.hpp"

namespace kiln {

struct PlanItem {
  std::string op;
  DType dtype = DType::f32;
  std::string shape;                 // as OpSchema::problem_from_shape reads it
  std::optional<std::string> device;  // "host", "cuda:0" (record files name it)
  std::optional<std::string> strategy;
  std::optional<std::size_t> budget_evals;
  std::optional<double> budget_seconds;
  int line = 0;                      // where it was written, for messages
};

struct Plan {
  std::string source;                // the file
  std::optional<std::string> strategy;
  std::optional<std::size_t> budget_evals;
  std::optional<double> budget_seconds;
  std::vector<PlanItem> problems;
};

// Throw ArgumentError naming the file, the line and what is wrong.
Plan load_plan(const std::string& path);
Plan parse_plan(const std::string& yaml_text, const std::string& source);
Plan load_problem_list(const std::string& path);

// A plan file: `name_or_path` itself when it exists, else <configs>/plans/<name>[.yaml] of the
// install (or build tree).  Throws ArgumentError listing the shipped plans when neither exists.
std::string find_plan(const std::string& name_or_path);
// The shipped plans directory (may be empty when it cannot be determined).
std::string shipped_plans_dir();

// One line of a problem list: "<op> <dtype> <name=value,...> <device>".
std::string problem_list_line(const Problem& problem);
// Why `line` cannot be a line of a problem list (load_problem_list's rule); "" when it can, or is
// blank or a comment.
std::string problem_list_line_problem(const std::string& line);

}  // namespace kiln
