#include <kiln/kiln.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

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

TEST_CASE("op dim and variant names the tuning database cannot store are refused at registration") {
  // The database keys its entries by op name, dtype|dim=value|... and stores the variant's name:
  // an op "my scale", a dim "rows x" or a variant "scale fast" registered fine, were tuned for
  // minutes, and then put() refused the result ("is not an op name", "is not a variant name").
  auto refused = [](const std::function<void(kiln::Registry&)>& add) -> std::string {
    kiln::Registry r;
    try {
      add(r);
    } catch (const kiln::RegistryError& e) {
      return e.what();
    }
    return "";
  };
  auto with_name = [](std::string name) {
    auto s = kiln_test::scale_schema();
    s->name = std::move(name);
    return s;
  };
  const std::string op = refused([&](kiln::Registry& r) { r.add_op(with_name("my scale")); });
  CHECK_THAT(op, KILN_CONTAINS("'my scale'") && KILN_CONTAINS("op name"));
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(with_name("scale|f32")); }), KILN_CONTAINS("op name"));
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(with_name("scale\x1b[2J")); }), KILN_CONTAINS("\\x1b"));
  auto dims = [](std::vector<std::string> names) {
    auto s = kiln_test::scale_schema();
    s->dim_names = std::move(names);
    return s;
  };
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(dims({"rows x"})); }), KILN_CONTAINS("dim name 'rows x'"));
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(dims({"n=1"})); }), KILN_CONTAINS("dim name 'n=1'"));
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(dims({""})); }), KILN_CONTAINS("dim name ''"));
  CHECK_THAT(refused([&](kiln::Registry& r) { r.add_op(dims({"n", "n"})); }), KILN_CONTAINS("'n' is given twice"));
  const std::string variant =
      refused([&](kiln::Registry& r) { r.add_variant(std::make_shared<ScaleVariant>("scale fast", 1, false)); });
  CHECK_THAT(variant, KILN_CONTAINS("variant 'scale fast'"));
  // What the database stores is accepted: dots and dashes in a variant name too.
  CHECK(refused([&](kiln::Registry& r) { r.add_op(with_name("scale_2")); }).empty());
  CHECK(refused([&](kiln::Registry& r) { r.add_variant(std::make_shared<ScaleVariant>("scale-v1.2_x", 1, false)); }).empty());
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

TEST_CASE("errors quote the op name and shape and dtype text a caller gave printably") {
  // rt.op(name), problem_from_shape and parse_dtype put the caller's text in their messages raw:
  // `kiln list $'\e[2J'` cleared the terminal, and a program logging e.what() for a name it was
  // handed wrote the escape sequence into its log.
  const kiln::Registry r = kiln_test::scale_registry();
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const kiln::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string op = message([&] { r.op("\x1b[2Jx"); });
  CHECK(op.find('\x1b') == std::string::npos);
  CHECK(op.find("unknown op '\\x1b[2Jx'") != std::string::npos);
  const kiln::OpSchema& scale = r.op("scale");
  for (const char* shape : {"64\x1b[31m", "n=\x1b[31m", "\x1b[31m=4", "64x\x07"}) {
    const std::string why = message([&] { scale.problem_from_shape(kiln::f32, shape, kiln::Device::host()); });
    CAPTURE(why);
    CHECK(why.find_first_of("\x1b\x07") == std::string::npos);
    CHECK(why.find("\\x") != std::string::npos);
  }
  const std::string dtype = message([] { kiln::parse_dtype("f\x1b[0m"); });
  CHECK(dtype.find("unknown dtype 'f\\x1b[0m'") != std::string::npos);
}
