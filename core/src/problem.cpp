#include "kiln/problem.hpp"

#include <charconv>
#include <functional>

#include "kiln/errors.hpp"
#include "kiln/op_schema.hpp"

namespace kiln {

std::int64_t Problem::dim(std::string_view name) const {
  const int i = schema ? schema->dim_index(name) : -1;
  if (i < 0 || i >= n_dims)
    throw ArgumentError("problem has no dim '" + std::string(name) + "'" +
                        (schema ? " (op " + schema->name + ")" : std::string()));
  return dims[i];
}

std::string Problem::key() const {
  // Problem is a plain struct; a count past dims[] would read beyond it.
  if (n_dims < 0 || n_dims > kMaxDims)
    throw ArgumentError("Problem::key: n_dims is " + std::to_string(n_dims) + ", expected 0 to " +
                        std::to_string(kMaxDims));
  std::string k(dtype_name(dtype));
  for (int i = 0; i < n_dims; ++i) {
    k += '|';
    k += schema && i < static_cast<int>(schema->dim_names.size()) ? schema->dim_names[i] : "d" + std::to_string(i);
    k += '=';
    k += std::to_string(dims[i]);
  }
  return k;
}

bool Problem::operator==(const Problem& o) const {
  return schema == o.schema && same_key(o) && device == o.device && align_bytes == o.align_bytes;
}

std::size_t Problem::hash() const {
  // One multiply-xorshift round per 64-bit field: allocation-free and a few nanoseconds, since
  // every op() call hashes its problem to find the memoised decision.
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  auto mix = [&h](std::uint64_t v) {
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  mix(reinterpret_cast<std::uintptr_t>(schema));
  mix(static_cast<std::uint64_t>(dtype));
  for (int i = 0; i < n_dims && i < kMaxDims; ++i) mix(static_cast<std::uint64_t>(dims[i]));
  mix(static_cast<std::uint64_t>(device.kind) * 1000 + static_cast<std::uint64_t>(device.ordinal + 1));
  mix(static_cast<std::uint64_t>(align_bytes));
  return static_cast<std::size_t>(h);
}

bool parse_problem_key(std::string_view key, ParsedKey& out) {
  out = ParsedKey{};
  std::size_t bar = key.find('|');
  const std::string_view dt = key.substr(0, bar);
  bool found = false;
  for (DType t : kAllDTypes)
    if (dtype_name(t) == dt) {
      out.dtype = t;
      found = true;
    }
  if (!found) return false;
  while (bar != std::string_view::npos) {
    const std::size_t start = bar + 1;
    bar = key.find('|', start);
    const std::string_view part = key.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || out.n_dims >= Problem::kMaxDims) return false;
    std::int64_t v = 0;
    const std::string_view num = part.substr(eq + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size()) return false;
    out.names[out.n_dims] = std::string(part.substr(0, eq));
    out.dims[out.n_dims] = v;
    ++out.n_dims;
  }
  return true;
}

int alignment_of(std::uintptr_t value) {
  int a = 16;
  while (a > 1 && value % static_cast<std::uintptr_t>(a) != 0) a /= 2;
  return a;
}

}  // namespace kiln
