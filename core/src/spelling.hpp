// "Did you mean ...?" for names typed by people: ops, variants, subcommands, flags, env values.
#pragma once
#include <string>
#include <vector>

namespace kiln::detail {

// Edit distance with adjacent transpositions counted once ("lsit" -> "list" is 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word` when it is close enough to be a typo (at most a third of the
// longer name's letters changed, and at least one), else "".  Case-insensitive; ties go to the
// first candidate.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// "; did you mean 'list'?" for the closest candidate, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kiln::detail
