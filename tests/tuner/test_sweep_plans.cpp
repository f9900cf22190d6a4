// The sweep plans (configs/plans/coverage.yaml, heldout.yaml, from scripts/make_sweep_plans.py, and
// blind.yaml, from scripts/make_blind_plan.py):
// every problem is valid for its op — its shape parses, and arguments built from the schema's
// tensor specs re-derive the same problem through make_problem — no problem appears twice, the
// held-out and blind sets share no problem with the coverage grid, and the sets have the sizes
// issue 14 asks for (held-out: at least 40 GEMMs and 10 per other op).
#include <map>
#include <set>
#include <string>

#include <kiln/kiln.hpp>
#include <kiln/tuner/plan.hpp>

#include "catch.hpp"

namespace {

// The problem's key, after checking that the op accepts arguments of its tensor specs.
std::string checked_key(const kiln::Runtime& rt, const kiln::PlanItem& item, const std::string& where) {
  INFO(where << " line " << item.line << ": " << item.op << " " << kiln::dtype_name(item.dtype) << " " << item.shape);
  const kiln::OpSchema& schema = rt.registry().op(item.op);
  const kiln::Problem p = schema.problem_from_shape(item.dtype, item.shape, kiln::Device::host());
  for (int i = 0; i < p.n_dims; ++i) CHECK(p.dims[i] >= 0);
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(schema.tensor_specs(p, specs).ok());
  // make_problem reads shapes, dtypes and strides only (and checks that outputs do not overlap
  // inputs): dummy addresses 2^40 bytes apart suffice.
  kiln::Args args;
  std::uintptr_t address = 0;
  for (const kiln::TensorSpec& s : specs) {
    address += std::uintptr_t{1} << 40;
    void* dummy = reinterpret_cast<void*>(address);
    if (s.shape.rank != 2) {
      args.push_tensor(kiln::TensorRef::vector(dummy, s.dtype, s.shape.numel(), kiln::Device::host()));
    } else if (s.transposed) {  // a column-major operand: the transposed view of a row-major array
      args.push_tensor(kiln::TensorRef::matrix(dummy, s.dtype, s.shape.cols(), s.shape.rows(), s.shape.rows(),
                                               kiln::Device::host())
                           .transposed());
    } else {
      args.push_tensor(
          kiln::TensorRef::matrix(dummy, s.dtype, s.shape.rows(), s.shape.cols(), s.shape.cols(), kiln::Device::host()));
    }
  }
  kiln::Args scalars;
  for (const kiln::ScalarRole& s : schema.scalars) scalars.push_scalar(s.default_value);
  if (schema.scalars_for) schema.scalars_for(p, scalars);
  for (int i = 0; i < scalars.scalar_count(); ++i) args.push_scalar(scalars.scalar(i));
  kiln::Problem derived;
  const kiln::Status st = schema.make_problem(args, derived);
  INFO(st.message());
  REQUIRE(st.ok());
  derived.schema = &schema;
  CHECK(derived.key() == p.key());
  return item.op + " " + p.key();
}

}  // namespace

TEST_CASE("coverage, held-out and blind sweep plans: valid, without duplicates, disjoint, large enough") {
  kiln::RuntimeOptions o;
  o.plugin_dirs = {KILN_PLUGIN_DIR};
  o.use_default_db_paths = false;
  o.tune_mode = "off";
  kiln::Runtime rt(o);
  const char* ops[] = {"gemm", "gemv", "dot", "reduce_sum", "add", "transpose", "histogram", "histogram_range", "topk"};
  for (const char* op : ops) {
    INFO("the plugin of " << op << " must be built (every family builds its host variants)");
    REQUIRE(rt.registry().find_op(op));
  }

  std::map<std::string, std::set<std::string>> keys;
  std::map<std::string, std::map<std::string, int>> per_op;
  for (const std::string name : {"coverage", "heldout", "blind"}) {
    const kiln::Plan plan = kiln::load_plan(KILN_SOURCE_DIR "/configs/plans/" + name + ".yaml");
    CHECK(plan.budget_evals);  // cheap by design: every problem has a bounded search
    for (const kiln::PlanItem& item : plan.problems) {
      const std::string key = checked_key(rt, item, name);
      INFO(name << ": " << key);
      CHECK(keys[name].insert(key).second);  // no duplicates
      ++per_op[name][item.op];
    }
  }
  std::vector<std::string> shared;  // neither measuring set may hold a tuned problem
  for (const std::string set : {"heldout", "blind"})
    for (const std::string& k : keys[set])
      if (keys["coverage"].count(k)) shared.push_back(set + ": " + k);
  INFO("in both sets: " << (shared.empty() ? std::string("none") : shared.front()));
  CHECK(shared.empty());

  CHECK(per_op["coverage"]["gemm"] >= 200);
  CHECK(per_op["heldout"]["gemm"] >= 40);
  CHECK(per_op["blind"]["gemm"] >= 20);
  for (const char* op : ops) {
    if (std::string(op) == "gemm") continue;
    INFO(op);
    CHECK(per_op["coverage"][op] >= 10);
    CHECK(per_op["heldout"][op] >= 10);
  }
}
