// Did-you-mean suggestions (core/src/spelling.hpp): used by unknown ops, CLI commands and flags,
// and environment values.
#include <string>
#include <vector>

#include "catch.hpp"
#include "spelling.hpp"

using kiln::detail::closest_name;
using kiln::detail::did_you_mean;
using kiln::detail::edit_distance;

TEST_CASE("edit distance counts an adjacent swap once") {
  CHECK(edit_distance("list", "list") == 0);
  CHECK(edit_distance("lsit", "list") == 1);  // transposition
  CHECK(edit_distance("gmem", "gemm") == 1);
  CHECK(edit_distance("shw", "show") == 1);   // insertion
  CHECK(edit_distance("tune", "tunes") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("the closest name is suggested only when it is close") {
  const std::vector<std::string> commands = {"devices", "list", "tune", "bench", "verify", "explain", "db", "demo"};
  CHECK(closest_name("lsit", commands) == "list");
  CHECK(closest_name("LIST", commands) == "list");  // case-insensitive
  CHECK(closest_name("bnech", commands) == "bench");
  CHECK(closest_name("frobnicate", commands).empty());
  CHECK(closest_name("x", commands).empty());
  CHECK(did_you_mean("tnue", commands) == "; did you mean 'tune'?");
  CHECK(did_you_mean("zzzz", commands).empty());
  CHECK(did_you_mean("anything", {}).empty());
}
