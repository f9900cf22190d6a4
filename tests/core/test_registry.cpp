#include <kiln/kiln.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

using kiln_test::ScaleVariant;

TEST_CASE("variants come back in priority order") {
  kiln::Registry r = kiln_test::scale_registry();
  const auto vs = r.variants("scale");
  REQUIRE(vs.size() == 2);
  CHECK(vs[0]->name() == "scale_even");
  CHECK(vs[1]->name() == "scale_any");
  CHECK(r.find_variant("scale_any") != nullptr);
  CHECK(r.find_variant("nope") == nullptr);
  CHECK(r.op_names() == std::vector<std::string>{"scale"});
  CHECK(r.source_of(*vs[0]).to_string() == "direct registration");
}

TEST_CASE("duplicate names are refused naming both sources") {
  kiln::Registry r = kiln_test::scale_registry();
  kiln::Source other{"other_plugin", "1.0", "abc", "/x/libkiln_other.so"};
  try {
    r.add_variant(std::make_shared<ScaleVariant>("scale_any", 1, false), other);
    FAIL("expected RegistryError");
  } catch (const kiln::RegistryError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("scale_any") != std::string::npos);
    CHECK(msg.find("direct registration") != std::string::npos);
    CHECK(msg.find("libkiln_other.so") != std::string::npos);
  }
  REQUIRE_THROWS_AS(r.add_op(kiln_test::scale_schema(), other), kiln::RegistryError);
}

TEST_CASE("incomplete schemas are refused") {
  kiln::Registry r;
  auto s = kiln_test::scale_schema();
  s->reference = nullptr;
  try {
    r.add_op(s);
    FAIL("expected RegistryError");
  } catch (const kiln::RegistryError& e) {
    CHECK(std::string(e.what()).find("reference") != std::string::npos);
  }
}

TEST_CASE("merge is all or nothing") {
  kiln::Registry r = kiln_test::scale_registry();
  kiln::Registry staged;
  staged.add_variant(std::make_shared<ScaleVariant>("scale_new", 1, false));
  staged.add_variant(std::make_shared<ScaleVariant>("scale_any", 1, false));  // clashes
  REQUIRE_THROWS_AS(r.merge(std::move(staged), kiln::Source{"p", "1", "b", "f.so"}), kiln::RegistryError);
  CHECK(r.find_variant("scale_new") == nullptr);

  kiln::Registry ok;
  ok.add_variant(std::make_shared<ScaleVariant>("scale_new", 1, false));
  r.merge(std::move(ok), kiln::Source{"p", "1", "b", "f.so"});
  REQUIRE(r.find_variant("scale_new") != nullptr);
  CHECK(r.source_of(*r.find_variant("scale_new")).plugin == "p");
}

TEST_CASE("variants whose op has no schema are reported") {
  kiln::Registry r;
  r.add_variant(std::make_shared<ScaleVariant>("scale_lonely", 1, false));
  REQUIRE(r.orphan_variants().size() == 1);
  CHECK(r.orphan_variants()[0].find("scale_lonely") != std::string::npos);
}

TEST_CASE("unknown ops list the known ones") {
  kiln::Registry r = kiln_test::scale_registry();
  try {
    r.op("gemm");
    FAIL("expected UnknownOpError");
  } catch (const kiln::UnknownOpError& e) {
    CHECK(std::string(e.what()).find("known ops: scale") != std::string::npos);
  }
}

TEST_CASE("a mistyped op name gets a suggestion") {
  kiln::Registry r = kiln_test::scale_registry();
  try {
    r.op("sacle");
    FAIL("expected UnknownOpError");
  } catch (const kiln::UnknownOpError& e) {
    CHECK(std::string(e.what()).find("unknown op 'sacle'; did you mean 'scale'?") != std::string::npos);
  }
  try {
    r.op("histogram");  // nothing like any known op: no suggestion, the list only
    FAIL("expected UnknownOpError");
  } catch (const kiln::UnknownOpError& e) {
    CHECK(std::string(e.what()).find("did you mean") == std::string::npos);
    CHECK(std::string(e.what()).find("known ops: scale") != std::string::npos);
  }
}
