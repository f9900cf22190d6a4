#include <kiln/kiln.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"

namespace {
kiln::DeviceInfo fake_gpu(std::size_t smem = 227 * 1024) {
  kiln::DeviceInfo d;
  d.device = kiln::Device::cuda(0);
  d.name = "Fake";
  d.cc_major = 9;
  d.sm_count = 132;
  d.smem_per_block_optin = smem;
  d.max_threads_per_block = 1024;
  return d;
}

kiln::ParamSpace tile_space() {
  kiln::ParamSpace s;
  s.param("BM", {32, 64, 128}).param("BN", {32, 64, 128}).param("threads", {128, 256, 1024, 2048});
  s.constraint("threads <= 1024", [](const kiln::Config& c, const kiln::DeviceInfo& d, const kiln::Problem&) {
    return c.get("threads") <= d.max_threads_per_block;
  });
  s.constraint("smem within the device limit", [](const kiln::Config& c, const kiln::DeviceInfo& d, const kiln::Problem&) {
    return static_cast<std::size_t>((c.get("BM") + c.get("BN")) * 16 * 4) <= d.smem_per_block_optin;
  });
  s.constraint("BM <= m", [](const kiln::Config& c, const kiln::DeviceInfo&, const kiln::Problem& p) {
    return p.n_dims == 0 || c.get("BM") <= p.dims[0];
  });
  return s;
}
}  // namespace

TEST_CASE("a space enumerates its cartesian product filtered by constraints") {
  const auto s = tile_space();
  CHECK(s.count() == 36);
  kiln::Problem big;
  big.n_dims = 1;
  big.dims[0] = 4096;
  // threads=2048 is out: 3 * 3 * 3 valid.
  CHECK(s.enumerate(fake_gpu(), big).size() == 27);
  CHECK(s.count_valid(fake_gpu(), big) == 27);
  // A small problem removes BM=128 and BM=64 too.
  kiln::Problem small = big;
  small.dims[0] = 32;
  CHECK(s.enumerate(fake_gpu(), small).size() == 9);
  // A device with little shared memory: (BM+BN)*64 <= 8192 bytes -> BM+BN <= 128.
  CHECK(s.enumerate(fake_gpu(8192), big).size() == 4 * 3);
}

TEST_CASE("at() decodes with the first parameter varying slowest") {
  const auto s = tile_space();
  CHECK(s.at(0) == kiln::Config{{"BM", 32}, {"BN", 32}, {"threads", 128}});
  CHECK(s.at(1) == kiln::Config{{"BM", 32}, {"BN", 32}, {"threads", 256}});
  CHECK(s.at(35) == kiln::Config{{"BM", 128}, {"BN", 128}, {"threads", 2048}});
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < s.count(); ++i) seen.insert(s.at(i).to_string());
  CHECK(seen.size() == 36);
}

TEST_CASE("violated() names the failing parameter or constraint") {
  const auto s = tile_space();
  kiln::Problem p;
  p.n_dims = 1;
  p.dims[0] = 4096;
  CHECK_FALSE(s.violated({{"BM", 64}, {"BN", 64}, {"threads", 256}}, fake_gpu(), p));
  auto bad_value = s.violated({{"BM", 96}, {"BN", 64}, {"threads", 256}}, fake_gpu(), p);
  REQUIRE(bad_value);
  CHECK(bad_value->find("BM: 96 not in {32, 64, 128}") != std::string::npos);
  auto bad_constraint = s.violated({{"BM", 64}, {"BN", 64}, {"threads", 2048}}, fake_gpu(), p);
  REQUIRE(bad_constraint);
  CHECK(bad_constraint->find("threads <= 1024") != std::string::npos);
  auto missing = s.violated({{"BM", 64}}, fake_gpu(), p);
  REQUIRE(missing);
  CHECK(missing->find("BN") != std::string::npos);
  CHECK(s.contains({{"BM", 64}, {"BN", 64}, {"threads", 2048}}));
  // A config is a set of named values: the order it lists them in does not matter (issue 8:
  // a hand-edited database may write {BN, BM}), the names and values do.
  CHECK(s.contains({{"BN", 64}, {"BM", 64}, {"threads", 256}}));
  CHECK_FALSE(s.violated({{"threads", 256}, {"BN", 64}, {"BM", 64}}, fake_gpu(), p));
  CHECK_FALSE(s.contains({{"BN", 64}, {"BX", 64}, {"threads", 256}}));
}

TEST_CASE("only() restricts a space to instantiated configs") {
  kiln::ParamSpace s;
  s.param("BM", {64, 128}).param("BN", {64, 128});
  s.only({{{"BM", 128}, {"BN", 128}}, {{"BM", 64}, {"BN", 64}}});
  kiln::Problem p;
  const auto valid = s.enumerate(fake_gpu(), p);
  REQUIRE(valid.size() == 2);
  auto why = s.violated({{"BM", 64}, {"BN", 128}}, fake_gpu(), p);
  REQUIRE(why);
  CHECK(why->find("instantiated") != std::string::npos);
}

TEST_CASE("only() refuses a list that does not fit the space") {
  const auto space = [] {
    kiln::ParamSpace s;
    s.param("BM", {64, 128}).param("BN", {64, 128});
    return s;
  };
  const auto refuses = [&](std::vector<kiln::Config> list, const std::string& says) {
    auto s = space();
    try {
      s.only(std::move(list));
    } catch (const kiln::ArgumentError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(says) != std::string::npos);
      return;
    }
    FAIL("only() accepted the list; expected an ArgumentError saying '" << says << "'");
  };
  refuses({}, "the list is empty");
  refuses({{{"BM", 64}, {"BN", 96}}}, "config 0 (BM=64 BN=96) is not in the space: BN: 96 not in {64, 128}");
  refuses({{{"BM", 64}}}, "does not name exactly the parameters {BM, BN}");
  refuses({{{"BM", 64}, {"BN", 64}, {"BK", 8}}}, "is not in the space");
  refuses({{{"BM", 64}, {"BX", 64}}}, "is not in the space");
  refuses({{{"BM", 64}, {"BN", 64}}, {{"BN", 64}, {"BM", 64}}}, "config 1 (BN=64 BM=64) repeats config 0");

  auto twice = space();
  twice.only({{{"BM", 64}, {"BN", 64}}});
  CHECK_THROWS_AS(twice.only({{{"BM", 128}, {"BN", 128}}}), kiln::ArgumentError);
  CHECK_THROWS_AS(twice.param("BK", {8, 16}), kiln::ArgumentError);
  // The refused calls left the first list in force.
  REQUIRE(twice.instantiated() != nullptr);
  CHECK(twice.instantiated()->size() == 1);
  CHECK(twice.params().size() == 2);
}

TEST_CASE("sample and neighbour stay inside the value lists") {
  const auto s = tile_space();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100; ++i) {
    const kiln::Config c = s.sample(rng);
    REQUIRE(s.contains(c));
    const kiln::Config n = s.neighbour(c, rng);
    REQUIRE(s.contains(n));
    int differing = 0;
    for (std::size_t k = 0; k < c.values().size(); ++k) differing += c.values()[k] != n.values()[k];
    CHECK(differing == 1);
  }
}

TEST_CASE("configs print, parse and compare") {
  const kiln::Config c{{"BM", 128}, {"BN", 64}};
  CHECK(c.to_string() == "BM=128 BN=64");
  CHECK(kiln::Config::parse("BM=128 BN=64") == c);
  CHECK(kiln::Config::parse("BM=128,BN=64") == c);
  CHECK(kiln::Config::parse("(none)").empty());
  CHECK(kiln::Config().to_string() == "(none)");
  CHECK(c.get("BN") == 64);
  CHECK(c.get_or("TM", 8) == 8);
  REQUIRE_THROWS_AS(c.get("TM"), kiln::ArgumentError);
  REQUIRE_THROWS_AS(kiln::Config::parse("BM=x"), kiln::ArgumentError);
  REQUIRE_THROWS_AS(kiln::Config::parse("BM=1 BM=2"), kiln::ArgumentError);
  REQUIRE_THROWS_AS(kiln::ParamSpace().param("a", {}), kiln::ArgumentError);
  REQUIRE_THROWS_AS(kiln::ParamSpace().param("a", {1}).param("a", {2}), kiln::ArgumentError);
}

TEST_CASE("Config::parse quotes the caller's text printable in its errors") {
  // An escape sequence in a bad config must not reach a terminal or a log raw.
  for (const char* bad : {"BM=\x1b[2J", "\x1b[31mBM=1 \x1b[31mBM=2"}) {
    std::string msg;
    try {
      kiln::Config::parse(bad);
    } catch (const kiln::ArgumentError& e) {
      msg = e.what();
    }
    INFO(msg);
    CHECK(msg.find("config '") != std::string::npos);
    CHECK(msg.find('\x1b') == std::string::npos);
    CHECK(msg.find("\\x1b") != std::string::npos);
  }
}

TEST_CASE("a space whose cartesian product passes uint64 is refused and names the parameter") {
  // count() and at() index the product with a uint64: nine 256-value parameters (2^72 configs)
  // counted 0 and enumerated nothing, without a word.
  kiln::ParamSpace s;
  std::vector<int> values(256);
  for (int i = 0; i < 256; ++i) values[static_cast<std::size_t>(i)] = i;
  for (int i = 0; i < 7; ++i) s.param("p" + std::to_string(i), values);
  CHECK(s.count() == (std::uint64_t{1} << 56));
  s.param("p7", std::vector<int>(values.begin(), values.begin() + 255));  // 255 * 2^56 still fits
  CHECK(s.count() == 255 * (std::uint64_t{1} << 56));
  CHECK_THROWS_AS(s.param("p8", {1, 2}), kiln::ArgumentError);
  CHECK_THROWS_WITH(s.param("p8", {1, 2}), KILN_CONTAINS("'p8'") && KILN_CONTAINS("2^64"));
  CHECK(s.params().size() == 8);  // the refused parameter is not added
  CHECK(s.count() == 255 * (std::uint64_t{1} << 56));
  s.param("p8", {1});  // one value keeps the product
  CHECK(s.count() == 255 * (std::uint64_t{1} << 56));
}

TEST_CASE("a parameter name the tuning database cannot store is refused") {
  // Configs are stored as {name: value}: a space's "B M" was tuned, then refused by the database.
  CHECK_THROWS_AS(kiln::ParamSpace().param("B M", {1}), kiln::ArgumentError);
  CHECK_THROWS_WITH(kiln::ParamSpace().param("B M", {1}), KILN_CONTAINS("'B M'") && KILN_CONTAINS("letters, digits"));
  CHECK_THROWS_AS(kiln::ParamSpace().param("", {1}), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::ParamSpace().param("BM=1", {1}), kiln::ArgumentError);
  CHECK(kiln::ParamSpace().param("BM_2", {1}).count() == 1);
}

TEST_CASE("a careless space or config is refused where it is declared") {
  // Each of these was accepted: an empty predicate threw std::bad_function_call from the first
  // enumerate(); a repeated value listed the same config twice; at() past the end wrapped round to
  // another config; a name given twice in a Config silently kept the last value.
  const kiln::DeviceInfo d = fake_gpu();
  kiln::ParamSpace s;
  s.param("A", {1, 2});
  CHECK_THROWS_AS(s.constraint("A small", nullptr), kiln::ArgumentError);
  CHECK_THROWS_WITH(s.constraint("A small", nullptr), KILN_CONTAINS("'A small'") && KILN_CONTAINS("predicate is empty"));
  CHECK_THROWS_AS(s.constraint("", [](const kiln::Config&, const kiln::DeviceInfo&, const kiln::Problem&) { return true; }),
                  kiln::ArgumentError);
  CHECK(s.constraints().empty());  // nothing refused was added
  CHECK(s.enumerate(d, kiln::Problem{}).size() == 2);

  CHECK_THROWS_AS(kiln::ParamSpace().param("B", {4, 8, 4}), kiln::ArgumentError);
  CHECK_THROWS_WITH(kiln::ParamSpace().param("B", {4, 8, 4}), KILN_CONTAINS("'B'") && KILN_CONTAINS("value 4 is listed twice"));

  CHECK(s.at(1) == kiln::Config{{"A", 2}});
  CHECK_THROWS_AS(s.at(2), kiln::ArgumentError);
  CHECK_THROWS_WITH(s.at(2), KILN_CONTAINS("index 2") && KILN_CONTAINS("0 to 1"));
  CHECK_THROWS_AS(s.at(~std::uint64_t{0}), kiln::ArgumentError);
  CHECK(kiln::ParamSpace().at(0).empty());  // the empty space has one config, the empty one
  CHECK_THROWS_AS(kiln::ParamSpace().at(1), kiln::ArgumentError);

  CHECK_THROWS_AS((kiln::Config{{"BM", 64}, {"BM", 128}}), kiln::ArgumentError);
  CHECK_THROWS_WITH((kiln::Config{{"BM", 64}, {"BM", 128}}), KILN_CONTAINS("'BM' given twice"));
  kiln::Config c;
  CHECK_THROWS_AS(c.set("", 5), kiln::ArgumentError);
  CHECK(c.empty());
  c.set("BM", 1);
  c.set("BM", 2);  // set() replaces, as documented
  CHECK(c.get("BM") == 2);
}
