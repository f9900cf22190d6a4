// A bounded fuzz test over the inputs a user types or a file carries: shape strings (--shape),
// plan files (--plan) and problem lists (--from).  Every input must either become a valid
// problem or be refused with a kiln::ArgumentError; nothing else may escape and nothing may
// crash.  A valid problem small enough is then built for real (inputs, host reference), so a
// problem that passed validation but breaks the op's reference shows up here (under the
// sanitizer build in CI as a heap overflow).
//
// KILN_FUZZ_SECONDS (default 1) bounds each of the three fuzz sections; KILN_FUZZ_SEED (default
// 1) picks the sequence.  A failure prints the input that caused it.
#include <kiln/kiln.hpp>
#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "families.hpp"

namespace {

double fuzz_seconds() {
  const char* s = std::getenv("KILN_FUZZ_SECONDS");
  const double v = s ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

std::uint64_t fuzz_seed() {
  const char* s = std::getenv("KILN_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 1;
}

class Clock {
 public:
  explicit Clock(double seconds)
      : end_(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(seconds))) {}
  bool running() const { return std::chrono::steady_clock::now() < end_; }

 private:
  std::chrono::steady_clock::time_point end_;
};

// Numbers a careless or hostile user would try: boundaries of int32, int64, of byte counts.
const std::vector<std::string>& edge_numbers() {
  static const std::vector<std::string> v = {
      "0", "1", "2", "3", "7", "31", "32", "33", "255", "256", "1000", "1025", "4099", "65537",
      "2147483647", "2147483648", "4294967295", "4294967296", "3037000499", "3037000500", "1073741824",
      "4611686018427387903", "4611686018427387904", "2305843009213693952", "9223372036854775807",
      "9223372036854775808", "18446744073709551616", "-1", "-9223372036854775808", "+5", "07", "0x10", "1e3",
      "", " ", "nan", "inf", "99999999999999999999999999",
  };
  return v;
}

std::string random_shape(std::mt19937_64& rng, const kiln::OpSchema& s) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<std::string>& nums = edge_numbers();
  std::string out;
  const std::size_t items = pick(s.dim_names.size() + 3);
  for (std::size_t i = 0; i < items; ++i) {
    if (i) out += pick(5) == 0 ? "," : "x";
    if (pick(3) == 0) out += (pick(6) == 0 ? std::string("zz") : s.dim_names[pick(s.dim_names.size())]) + "=";
    // Mostly small sizes (the valid problems we can build), sometimes an edge.
    out += pick(3) == 0 ? nums[pick(nums.size())] : std::to_string(pick(5) == 0 ? pick(5000) : pick(40));
  }
  if (pick(8) == 0) {  // a byte of noise
    const char noise[] = "x,=- \t\n\0a9";
    out.insert(pick(out.size() + 1), 1, noise[pick(sizeof noise - 1)]);
  }
  return out;
}

// What every accepted problem must satisfy; builds it for real when it is small.
void check_accepted(const kiln::OpSchema& s, const kiln::Problem& p, const std::string& input) {
  INFO("accepted: " << s.name << " '" << input << "' -> " << p.key());
  REQUIRE(p.schema == &s);
  REQUIRE(p.n_dims == static_cast<int>(s.dim_names.size()));
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  double bytes = 0;
  for (const kiln::TensorSpec& t : specs) {
    REQUIRE(t.shape.fits(t.dtype));
    bytes += static_cast<double>(t.shape.bytes(t.dtype));
  }
  if (bytes > (1 << 20)) return;
  // Inputs, the host reference and the comparison: a problem the op accepted must be computable.
  kiln::ProblemData data(s, p, kiln::Device::host(), 3);
  (void)data.problem();
}

void try_shape(const kiln::OpSchema& s, kiln::DType dtype, const std::string& shape) {
  kiln::Problem p;
  try {
    p = s.problem_from_shape(dtype, shape, kiln::Device::host());
  } catch (const kiln::ArgumentError&) {
    return;  // refused with a message: fine
  } catch (const std::exception& e) {
    FAIL("'" << shape << "' for " << s.name << " threw a non-argument error: " << e.what());
  }
  check_accepted(s, p, shape);
}

// Mutations of a valid plan: the parser and the checks after it must refuse, never crash.
std::string mutate(std::mt19937_64& rng, std::string text) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % (n == 0 ? 1 : n)); };
  static const std::vector<std::string> tokens = {
      "[", "]", "{", "}", ":", ",", "-", "&a ", "*a", "!!binary ", "<<: ", "\"", "'", "\n", "  ", "#", "~", "null",
      "problems:", "op: topk", "shape: 1x10x20", "budget_evals: -1", "budget_seconds: .nan", "budget_seconds: 1e400",
      "budget_evals: 99999999999999999999", "dtype: f64", "dtype: q7", "shape: [1, 2]", "op: {a: b}", "? ",
      "- {op: add, shape: 3037000500x3037000500}", "- {op: reduce_sum, shape: \"4611686018427387904\"}",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "%YAML 1.2\n---\n", "\t", "\xff\xfe", "strategy: [x]"};
  const int edits = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < edits; ++i) {
    const std::size_t at = pick(text.size() + 1);
    switch (pick(3)) {
      case 0: text.insert(at, tokens[pick(tokens.size())]); break;
      case 1: text.erase(at, pick(8)); break;
      default: text.insert(at, 1, static_cast<char>(rng() & 0xff)); break;
    }
  }
  return text;
}

const char* kSeedPlan =
    "strategy: exhaustive\n"
    "budget_evals: 20\n"
    "problems:\n"
    "  - {op: add, dtype: f32, shape: 17x33}\n"
    "  - {op: topk, shape: \"rows=2,n=100,k=7,largest=0\", strategy: random, budget_seconds: 3}\n"
    "  - op: gemm\n"
    "    shape: 8x8x8\n"
    "    device: host\n";

// Resolves every item of a plan the way `kiln tune --plan` does, minus the tuning.
void resolve_items(const kiln::Plan& plan) {
  for (const kiln::PlanItem& item : plan.problems) {
    const kiln::OpSchema* s = kiln_test::family_registry().find_op(item.op);
    if (!s) continue;  // an unknown op: `kiln tune` reports it per item
    try_shape(*s, item.dtype, item.shape);
  }
}

}  // namespace

TEST_CASE("fuzz: shape strings become valid problems or ArgumentErrors", "[hardening][fuzz]") {
  std::mt19937_64 rng(fuzz_seed());
  const kiln::Registry& reg = kiln_test::family_registry();
  const std::vector<std::string> ops = reg.op_names();
  const kiln::DType dtypes[] = {kiln::f32, kiln::f64, kiln::u8, kiln::i32, kiln::f16};
  std::size_t tried = 0;
  for (Clock clock(fuzz_seconds()); clock.running();) {
    for (int burst = 0; burst < 64; ++burst, ++tried) {
      const kiln::OpSchema& s = reg.op(ops[rng() % ops.size()]);
      const kiln::DType t = rng() % 4 == 0 ? dtypes[rng() % 5] : s.dtypes.front();
      try_shape(s, t, random_shape(rng, s));
    }
  }
  CHECK(tried > 0);
}

TEST_CASE("fuzz: plan files parse into checked items or ArgumentErrors", "[hardening][fuzz]") {
  std::mt19937_64 rng(fuzz_seed() * 7919);
  resolve_items(kiln::parse_plan(kSeedPlan, "seed.yaml"));  // the seed itself is valid
  std::size_t tried = 0, parsed = 0;
  for (Clock clock(fuzz_seconds()); clock.running(); ++tried) {
    std::string text = kSeedPlan;
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) text = mutate(rng, text);
    INFO("plan text:\n" << text);
    kiln::Plan plan;
    try {
      plan = kiln::parse_plan(text, "fuzz.yaml");
    } catch (const kiln::ArgumentError&) {
      continue;
    } catch (const std::exception& e) {
      FAIL("parse_plan threw a non-argument error: " << e.what());
    }
    ++parsed;
    for (const kiln::PlanItem& item : plan.problems) {
      REQUIRE(!item.op.empty());
      if (item.budget_evals) REQUIRE(*item.budget_evals >= 1);
      if (item.budget_seconds) REQUIRE(*item.budget_seconds > 0);
    }
    resolve_items(plan);
  }
  CHECK(tried > 0);
  CHECK(parsed > 0);  // some mutations keep the plan valid, so items are resolved too
}

TEST_CASE("fuzz: problem lists load into checked items or ArgumentErrors", "[hardening][fuzz]") {
  std::mt19937_64 rng(fuzz_seed() * 104729);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("kiln_fuzz_problems_" + std::to_string(::getpid()) + ".txt");
  const std::string seed_list = "add f32 m=17,n=33 host\ntopk f32 rows=2,n=100,k=7,largest=1 host\n# note\ngemm f32 8x8x8\n";
  std::size_t tried = 0;
  for (Clock clock(fuzz_seconds()); clock.running(); ++tried) {
    const std::string text = mutate(rng, seed_list);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    INFO("problem list:\n" << text);
    kiln::Plan plan;
    try {
      plan = kiln::load_problem_list(file.string());
    } catch (const kiln::ArgumentError&) {
      continue;
    } catch (const std::exception& e) {
      FAIL("load_problem_list threw a non-argument error: " << e.what());
    }
    resolve_items(plan);
  }
  std::error_code ec;
  std::filesystem::remove(file, ec);
  CHECK(tried > 0);
}

TEST_CASE("plan files and problem lists refuse endless or huge inputs", "[hardening]") {
  // /dev/zero used to be read until the memory ran out.
  CHECK_THROWS_AS(kiln::load_problem_list("/dev/zero"), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::load_plan("/dev/zero"), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::load_plan("/"), kiln::ArgumentError);
  // Numbers a plan cannot mean.
  for (const char* bad : {"budget_seconds: .nan", "budget_seconds: .inf", "budget_seconds: -1", "budget_evals: 0",
                          "budget_evals: 10000000000", "strategy: \"\""}) {
    INFO(bad);
    CHECK_THROWS_AS(kiln::parse_plan(std::string(bad) + "\nproblems:\n  - {op: add, shape: 3x5}\n", "p.yaml"),
                    kiln::ArgumentError);
  }
  // Empty names (found by this fuzz test: `op: !!binary` gave an op named "").
  for (const char* bad : {"{op: !!binary , shape: 3x5}", "{op: \"\", shape: 3x5}", "{op: add, shape: \"\"}",
                          "{op: add, shape: 3x5, device: \"\"}"}) {
    INFO(bad);
    CHECK_THROWS_AS(kiln::parse_plan(std::string("problems:\n  - ") + bad + "\n", "p.yaml"), kiln::ArgumentError);
  }
}
