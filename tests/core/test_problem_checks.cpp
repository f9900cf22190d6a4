// Runtime::explain and Dispatcher::decide take a Problem, a plain struct a caller may fill in by
// hand.  Such a problem is checked as op() would have made it (a schema of this registry, the op's
// dim count, dims >= 0, a known dtype, align_bytes 1, 2, 4, 8 or 16) before anything reads it:
// align_bytes 0 reached the variants' `% align_bytes`, a copied schema was followed, and negative
// dims went into the evidence's log distances.
#include <kiln/kiln.hpp>

#include <memory>
#include <vector>

#include "catch.hpp"
#include "scale_op.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

TEST_CASE("Runtime::explain and Dispatcher::decide check a hand-made Problem like op() makes one") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::DeviceInfo& host_info = kiln::device_info(kiln::Device::host());
  const kiln::Problem good = rt.registry().op("scale").problem_from_shape(kiln::f32, "64", kiln::Device::host());
  REQUIRE(rt.explain(good).variant != nullptr);

  for (int align : {0, 3, -16, 32}) {
    kiln::Problem p = good;
    p.align_bytes = align;
    const std::string expected = "argument 'problem' has align_bytes = " + std::to_string(align) +
                                 ", expected 1, 2, 4, 8 or 16";
    CHECK_THROWS_AS(rt.explain(p), kiln::ArgumentError);
    CHECK(error_message([&] { rt.explain(p); }) == "Runtime::explain: " + expected);
    CHECK(error_message([&] { rt.dispatcher().decide(p, host_info); }) == "Dispatcher::decide: " + expected);
    CHECK(error_message([&] { rt.dispatcher().decide_uncached(p, host_info); }) == "Dispatcher: " + expected);
  }
  for (int align : {1, 2, 4, 8, 16}) {
    kiln::Problem p = good;
    p.align_bytes = align;
    CHECK(rt.explain(p).variant != nullptr);
  }

  kiln::Problem negative = good;
  negative.dims[0] = -5;
  CHECK_THROWS_AS(rt.explain(negative), kiln::ShapeError);
  CHECK(error_message([&] { rt.explain(negative); }) ==
        "Runtime::explain: argument 'problem' is not one op() could make: scale: extent 'n' is -5, expected >= 0");
  CHECK_THROWS_AS(rt.dispatcher().decide(negative, host_info), kiln::ShapeError);

  kiln::Problem no_dims = good;
  no_dims.n_dims = 0;
  CHECK_THROWS_AS(rt.explain(no_dims), kiln::ShapeError);
  CHECK(error_message([&] { rt.explain(no_dims); }) ==
        "Runtime::explain: argument 'problem' has 0 dims, expected 1 for op 'scale'");

  kiln::Problem bad_dtype = good;
  bad_dtype.dtype = static_cast<kiln::DType>(99);
  CHECK_THROWS_AS(rt.explain(bad_dtype), kiln::DTypeError);
  CHECK(error_message([&] { rt.explain(bad_dtype); }) == "Runtime::explain: argument 'problem' has an unknown dtype (99)");

  kiln::Problem bad_device = good;
  bad_device.device = kiln::Device{static_cast<kiln::DeviceKind>(7), 3};
  CHECK_THROWS_AS(rt.dispatcher().decide_uncached(bad_device, host_info), kiln::DeviceError);

  // A schema that is not the registry's (a copy, or one freed since) is not followed.
  auto copy = std::make_shared<kiln::OpSchema>(rt.registry().op("scale"));
  kiln::Problem foreign = good;
  foreign.schema = copy.get();
  CHECK_THROWS_AS(rt.explain(foreign), kiln::ArgumentError);
  CHECK(error_message([&] { rt.explain(foreign); }) ==
        "Runtime::explain: argument 'problem' names an op schema this runtime's registry does not hold (expected a "
        "Problem made by OpSchema::problem_from_dims, problem_from_shape or Op::problem of this runtime)");
  CHECK(rt.dispatcher().memo_size() == 0);  // nothing bad was memoised
}
