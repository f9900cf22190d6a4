// The `--json` writer (tuner/cli/json.cpp): whatever bytes a database file or a driver hands it,
// the output is valid JSON in valid UTF-8.
#include <string>

#include "catch.hpp"
#include "json.hpp"

using kiln::cli::Json;

namespace {

// A strict UTF-8 check (RFC 3629), written independently of the writer's.
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

bool has_raw_control(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

std::string dumped(const std::string& text) { return Json(text).dump(0); }

}  // namespace

TEST_CASE("json: strings are escaped and always valid UTF-8") {
  CHECK(dumped("plain") == "\"plain\"");
  CHECK(dumped("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(dumped("\n\t\x1b[31m") == "\"\\n\\t\\u001b[31m\"");
  CHECK(dumped("\x7f") == "\"\\u007f\"");
  CHECK(dumped("\xc2\x9b" "2J") == "\"\\u009b2J\"");  // C1 CSI, which terminals may honour
  CHECK(dumped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\"");
  const std::string fffd = "\xef\xbf\xbd";
  CHECK(dumped("\xff") == "\"" + fffd + "\"");
  CHECK(dumped("a\xc3") == "\"a" + fffd + "\"");                  // cut short at the end
  CHECK(dumped("\xc0\xaf") == "\"" + fffd + fffd + "\"");        // overlong '/'
  CHECK(dumped("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  CHECK(dumped("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // above U+10FFFF
  CHECK(dumped("\xe2\x82x") == "\"" + fffd + "x\"");             // lead and one continuation: one U+FFFD
  CHECK(dumped(std::string("a\0b", 3)) == "\"a\\u0000b\"");
  // Keys too, and every byte value in every position.
  Json o = Json::object();
  o.set("k\xff\x1b", "v");
  CHECK(valid_utf8(o.dump()));
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; b += 3) {
      const std::string s = {static_cast<char>(a), static_cast<char>(b), static_cast<char>(0x80 + (a + b) % 64)};
      const std::string d = dumped(s);
      INFO(a << " " << b);
      REQUIRE(valid_utf8(d));
      REQUIRE(!has_raw_control(d));
    }
}
