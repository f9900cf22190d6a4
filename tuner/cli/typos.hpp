// Mistyped subcommands and flags: "unknown command 'lsit'; did you mean 'list'?".
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace kiln::cli {

// Walks argv along `app`'s subcommands and returns a message for the first token that names no
// subcommand or option where one was expected, with the closest name; "" when every token is
// known (the parse failed for another reason: a missing or bad value).
std::string describe_unknown_input(const CLI::App& app, int argc, const char* const* argv);

}  // namespace kiln::cli
