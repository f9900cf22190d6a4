// Mistyped subcommands and flags: "unknown command 'lsit'; did you mean 'list'?".
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kiln::cli {

// Walks argv along `app`'s subcommands and returns a message for the first token that names no
// subcommand or option where one was expected, with the closest name; "" when every token is
// known (the parse failed for another reason: a missing or bad value).
std::string describe_unknown_input(const CLI::App& app, int argc, const char* const* argv);

// argv (the program name first) with each `--name=` of an option that takes a value split into
// `--name` and an explicit "": CLI11 reads `--dtype=` as `--dtype` and takes the next argument
// for its value (`--dtype= --json` was dtype '--json'), where the empty value is meant, and is
// then refused by name.  Flags (`--json=`) and everything after `--` are left as they are.
std::vector<std::string> with_explicit_empty_values(const CLI::App& app, int argc, const char* const* argv);

}  // namespace kiln::cli
