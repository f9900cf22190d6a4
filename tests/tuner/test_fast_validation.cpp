// Cheap inputs and expected outputs for the tuner (issue 14): the counter-based generator
// (kiln::fill_random) and the oracle path of ProblemData/ProblemEvaluator, on the host backend.
// A wrong candidate must still fail when the expected outputs come from an oracle, and an oracle
// that is wrong on a few elements must be caught by its sample check (the evaluator then falls
// back to the host reference).  The GPU side (device fill == host fill, device comparison, the
// vendor oracle) is in gpu/test_fast_validation_gpu.cpp.
#include <cmath>
#include <set>

#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/oracle.hpp>
#include <kiln/tuner/problem_data.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

namespace {

// A scale variant that is wrong where `wrong(i, n)` says (a wrong last element is an edge bug).
class WrongScale final : public kiln::Variant {
 public:
  WrongScale(std::string name, bool (*wrong)(std::int64_t, std::int64_t))
      : Variant({std::move(name), "scale", kiln::DeviceKind::host, {kiln::f32}, 1, "wrong somewhere"}, kiln::ParamSpace()),
        wrong_(wrong) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config&, void*, kiln::Stream) const override {
    const float f = static_cast<float>(a.scalar(0));
    for (std::int64_t i = 0; i < p.dims[0]; ++i)
      a.tensor(1).as<float>()[i] = f * a.tensor(0).as<float>()[i] + (wrong_(i, p.dims[0]) ? 0.5f : 0.0f);
    return kiln::Status();
  }

 private:
  bool (*wrong_)(std::int64_t, std::int64_t);
};

bool last_only(std::int64_t i, std::int64_t n) { return i == n - 1; }
bool every_tenth(std::int64_t i, std::int64_t) { return i % 10 == 3; }

std::shared_ptr<kiln::OpSchema> scale_with_elements() {
  auto s = kiln_test::scale_schema();
  s->reference_element = [](const kiln::Args& in, const kiln::Problem&, int, std::int64_t, std::int64_t i) {
    return static_cast<double>(static_cast<float>(in.scalar(0)) * in.tensor(0).as<const float>()[i]);
  };
  return s;
}

}  // namespace

TEST_CASE("fill_random: deterministic, in range, independent of the row stride") {
  auto a = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1 << 20});
  auto b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1 << 20});
  kiln::fill_random(a.ref(), kiln::InputDistribution::default_for(kiln::f32), 42);
  kiln::fill_random(b.ref(), kiln::InputDistribution::default_for(kiln::f32), 42);
  const float* x = a.ref().as<float>();
  const float* y = b.ref().as<float>();
  double sum = 0.0, sum2 = 0.0;
  std::set<float> distinct;
  bool same = true, in_range = true;
  for (int i = 0; i < (1 << 20); ++i) {
    same = same && x[i] == y[i];
    in_range = in_range && x[i] >= -1.0f && x[i] < 1.0f;
    sum += x[i];
    sum2 += double(x[i]) * x[i];
    if (i < 4096) distinct.insert(x[i]);
  }
  CHECK(same);
  CHECK(in_range);
  CHECK(std::abs(sum / (1 << 20)) < 0.01);                  // mean 0
  CHECK(std::abs(sum2 / (1 << 20) - 1.0 / 3.0) < 0.01);     // variance of U[-1, 1)
  CHECK(distinct.size() > 4000);

  kiln::fill_random(b.ref(), kiln::InputDistribution::default_for(kiln::f32), 43);
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += x[i] == b.ref().as<float>()[i];
  CHECK(equal < 5);  // another seed, other values

  // The multi-threaded path (> 2^20 elements) and a single row give the same values as the
  // small single-threaded fill of a prefix: element i depends on (seed, i) only.
  auto big = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {3, (1 << 20) + 7});
  auto row = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1000});
  kiln::fill_random(big.ref(), kiln::InputDistribution::real(0.0, 1.0), 5);
  kiln::fill_random(row.ref(), kiln::InputDistribution::real(0.0, 1.0), 5);
  for (int i = 0; i < 1000; ++i) REQUIRE(big.ref().as<float>()[i] == row.ref().as<float>()[i]);

  // A pitched tensor holds the same logical values as a dense one.
  auto dense = kiln::Buffer::alloc(kiln::Device::host(), kiln::f64, {37, 29});
  auto pitched = kiln::Buffer::alloc_pitched(kiln::Device::host(), kiln::f64, 37, 29);
  kiln::fill_random(dense.ref(), kiln::InputDistribution::default_for(kiln::f64), 9);
  kiln::fill_random(pitched.ref(), kiln::InputDistribution::default_for(kiln::f64), 9);
  for (int r = 0; r < 37; ++r)
    for (int c = 0; c < 29; ++c)
      REQUIRE(dense.ref().as<double>()[r * dense.row_stride() + c] == pitched.ref().as<double>()[r * pitched.row_stride() + c]);
}

TEST_CASE("fill_random: integer ranges hit both ends; bad distributions are refused") {
  auto u = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {100000});
  kiln::fill_random(u.ref(), kiln::InputDistribution::default_for(kiln::u8), 1);
  int lo = 255, hi = 0;
  for (int i = 0; i < 100000; ++i) {
    lo = std::min<int>(lo, u.ref().as<std::uint8_t>()[i]);
    hi = std::max<int>(hi, u.ref().as<std::uint8_t>()[i]);
  }
  CHECK(lo == 0);
  CHECK(hi == 255);
  auto v = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {100000});
  kiln::fill_random(v.ref(), kiln::InputDistribution::default_for(kiln::i32), 1);
  int vlo = 0, vhi = 0;
  for (int i = 0; i < 100000; ++i) {
    vlo = std::min(vlo, v.ref().as<std::int32_t>()[i]);
    vhi = std::max(vhi, v.ref().as<std::int32_t>()[i]);
  }
  CHECK(vlo == -1000);
  CHECK(vhi == 1000);
  CHECK_THROWS_AS(kiln::fill_random(v.ref(), kiln::InputDistribution::real(0, 1), 1), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::fill_random(u.ref(), kiln::InputDistribution::integer(5, 4), 1), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::fill_random(u.ref(), kiln::InputDistribution::real(1, 1), 1), kiln::ArgumentError);
}

TEST_CASE("an oracle's outputs are the expected ones only after its sample check passes") {
  auto schema = scale_with_elements();
  const kiln::Problem p = schema->problem_from_shape(kiln::f32, "100003", kiln::Device::host());
  kiln_test::ScaleVariant good("scale_good", 1, false);
  WrongScale edge("scale_edge_bug", last_only), sparse("scale_sparse_bug", every_tenth);

  SECTION("a correct oracle: candidates are compared with its outputs, a wrong one fails") {
    kiln::ProblemData data(*schema, p, kiln::Device::host(), 42, {false, false});
    CHECK_FALSE(data.has_expected());
    const kiln::OracleCheck check = data.use_oracle(good, {{"unroll", 1}}, nullptr, kiln::Stream(), 256);
    REQUIRE(check.status.ok());
    CHECK(check.samples >= 256);
    CHECK(check.error == 0.0);
    REQUIRE(data.has_expected());
    data.poison_outputs();
    REQUIRE(good.launch(data.device_args(), data.problem(), {{"unroll", 1}}, nullptr, kiln::Stream()).ok());
    CHECK(data.error() == 0.0);
    data.poison_outputs();
    REQUIRE(edge.launch(data.device_args(), data.problem(), {}, nullptr, kiln::Stream()).ok());
    CHECK(data.error() > data.tolerance());  // wrong in one element of 100003: still caught
    data.poison_outputs();
    CHECK(std::isinf(data.error()));  // poisoned (unwritten) outputs are infinitely wrong
  }
  SECTION("an oracle wrong at an edge element or on a fraction of elements is refused") {
    for (const kiln::Variant* bad : {static_cast<const kiln::Variant*>(&edge), static_cast<const kiln::Variant*>(&sparse)}) {
      kiln::ProblemData data(*schema, p, kiln::Device::host(), 42, {false, false});
      const kiln::OracleCheck check = data.use_oracle(*bad, {}, nullptr, kiln::Stream(), 256);
      INFO(bad->name());
      CHECK_FALSE(check.status.ok());
      CHECK(check.status.message().find("disagrees") != std::string::npos);
      CHECK_FALSE(data.has_expected());
    }
  }
  SECTION("a schema without reference_element cannot use an oracle") {
    auto plain = kiln_test::scale_schema();
    kiln::ProblemData data(*plain, plain->problem_from_shape(kiln::f32, "64", kiln::Device::host()), kiln::Device::host(),
                           1, {false, false});
    CHECK_FALSE(data.use_oracle(good, {{"unroll", 1}}, nullptr, kiln::Stream(), 16).status.ok());
  }
}

TEST_CASE("ProblemEvaluator with an oracle: wrong candidates fail; a bad oracle falls back to the host reference") {
  auto schema = scale_with_elements();
  const kiln::Problem p = schema->problem_from_shape(kiln::f32, "50001", kiln::Device::host());
  kiln_test::ScaleVariant good("scale_good", 1, false);
  WrongScale edge("scale_edge_bug", last_only), sparse("scale_sparse_bug", every_tenth);

  for (const bool oracle_ok : {true, false}) {
    kiln::EvaluatorOptions o;
    o.oracle = kiln::Candidate{oracle_ok ? static_cast<const kiln::Variant*>(&good) : &sparse,
                               oracle_ok ? kiln::Config{{"unroll", 1}} : kiln::Config{}, true};
    kiln::ProblemEvaluator ev(p, o);
    INFO(ev.expected_source());
    if (oracle_ok) {
      CHECK(ev.expected_source().rfind("oracle scale_good", 0) == 0);
    } else {
      CHECK(ev.expected_source().rfind("host reference (oracle scale_sparse_bug", 0) == 0);
    }
    CHECK(ev.check({&good, {{"unroll", 1}}, true}).ok());
    const kiln::CandidateResult bad = ev.check({&edge, {}, true});
    CHECK(bad.outcome == kiln::Outcome::failed);
    CHECK(bad.reason.find("wrong result") != std::string::npos);
    CHECK(ev.check({&sparse, {}, true}).outcome == kiln::Outcome::failed);
  }
}

TEST_CASE("the oracle rule: only on a GPU, only for ops with reference_element, only for expensive references") {
  kiln::Registry r;
  r.add_op(scale_with_elements());
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_any", 5, false));
  const kiln::OpSchema& s = r.op("scale");
  const kiln::Problem p = s.problem_from_shape(kiln::f32, "1000000000", kiln::Device::host());
  CHECK(kiln::estimated_reference_seconds(p) == Approx(8e9 / 2e9));  // 8 GB at 2 GB/s
  kiln::EvaluatorOptions o;
  // The host has no vendor variant, and the host reference is as fast as any host oracle.
  CHECK_FALSE(kiln::choose_oracle(r, p, kiln::device_info(kiln::Device::host()), o));
}
