#include "kiln/tuner/shard.hpp"

#include <cstdlib>

#include "kiln/errors.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln {
namespace {

// A whole non-negative decimal number, or nullopt.
std::optional<std::size_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

Shard make_shard(std::optional<std::size_t> index, std::optional<std::size_t> count, const std::string& what,
                 const std::string& text, const char* expected) {
  if (!index || !count || *count < 1 || *index >= *count)
    throw ArgumentError("bad " + what + " '" + detail::printable(text) + "': expected " + expected);  // no escapes
  Shard s;
  s.index = *index;
  s.count = *count;
  s.source = what;
  return s;
}

}  // namespace

std::string Shard::to_string() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text, const std::string& what) {
  const auto slash = text.find('/');
  const char* expected = "i/N with 0 <= i < N, e.g. 0/4";
  if (slash == std::string::npos)
    throw ArgumentError("bad " + what + " '" + detail::printable(text) + "': expected " + expected);
  return make_shard(parse_count(text.substr(0, slash)), parse_count(text.substr(slash + 1)), what, text, expected);
}

std::optional<Shard> shard_from_environment(const GetEnv& getenv) {
  static const char* const kPairs[][2] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  for (const auto& pair : kPairs) {
    const char* rank = getenv(pair[0]);
    const char* size = getenv(pair[1]);
    if (!rank && !size) continue;
    const std::string what = std::string(pair[0]) + "/" + pair[1];
    if (!rank || !size)
      throw ArgumentError(std::string("launcher variables: ") + (rank ? pair[1] : pair[0]) + " is not set but " +
                          (rank ? pair[0] : pair[1]) + " is (give --shard i/N to choose the share yourself)");
    const std::string text = std::string(rank) + "/" + size;
    return make_shard(parse_count(rank), parse_count(size), what, text,
                      "a rank below the size, both whole numbers (or give --shard i/N)");
  }
  return std::nullopt;
}

std::optional<Shard> shard_from_environment() {
  return shard_from_environment([](const char* name) -> const char* { return std::getenv(name); });
}

std::string shard_key(const PlanItem& item) {
  return trimmed(item.op) + "|" + std::string(dtype_name(item.dtype)) + "|" + trimmed(item.shape);
}

std::uint64_t shard_hash(const std::string& key) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // FNV-1a's low bits depend only on the keys' low bits, and `% N` reads the low bits: mix them
  // with the MurmurHash3 finaliser so that similar keys spread over the shares.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

std::size_t shard_of(const PlanItem& item, std::size_t count) {
  return count <= 1 ? 0 : static_cast<std::size_t>(shard_hash(shard_key(item)) % count);
}

std::vector<std::size_t> shard_indices(const Plan& plan, const Shard& shard) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.problems.size(); ++i)
    if (shard_of(plan.problems[i], shard.count) == shard.index) out.push_back(i);
  return out;
}

}  // namespace kiln
