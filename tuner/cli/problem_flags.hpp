// The flags that name one problem, shared by `kiln tune`, `bench` and `explain`: the op, --shape,
// --dtype and --device, each refusing an empty value (range_check.hpp's not_empty).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "range_check.hpp"

namespace kiln::cli {

struct ProblemFlags {
  CLI::Option* op = nullptr;
  CLI::Option* device = nullptr;
};

inline ProblemFlags add_problem_flags(CLI::App* app, const std::string& op_help, std::string& op, std::string& shape,
                                      std::string& dtype, std::string& device) {
  ProblemFlags f;
  f.op = app->add_option("op", op, op_help)->check(not_empty("an op name (kiln list lists them)", false));
  app->add_option("--shape", shape, "Problem extents: 4096x4096x4096 or m=4096,n=4096,k=4096")
      ->check(not_empty("a shape such as 4096x4096", false));
  app->add_option("--dtype", dtype, "Element type (default: the op's first)")->check(not_empty("a dtype name such as f32"));
  f.device = app->add_option("--device", device, "host, cuda or cuda:N (default: CUDA 0 if present, else host)")
                 ->check(not_empty("host, cuda or cuda:N"));
  return f;
}

}  // namespace kiln::cli
