#include "topk_params.hpp"

#include <algorithm>
#include <string>

namespace kiln::topk {
namespace {

template <std::size_t N>
bool instantiated(const TileShape (&tiles)[N], const Config& c) {
  const int block = c.get("block"), items = c.get("items_per_thread");
  return std::any_of(tiles, tiles + N, [&](const TileShape& t) { return t.block == block && t.items == items; });
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

Chunking chunking(std::int64_t rows, std::int64_t n, std::int64_t tile, int blocks) {
  const std::int64_t per_row = std::max<std::int64_t>(1, ceil_div(blocks, std::max<std::int64_t>(rows, 1)));
  const std::int64_t most = std::max<std::int64_t>(1, std::min<std::int64_t>(ceil_div(n, tile), 65535));
  const std::int64_t wanted = std::min(per_row, most);
  Chunking c;
  c.chunk_len = ceil_div(ceil_div(n, wanted), tile) * tile;
  c.chunks = std::max<std::int64_t>(1, ceil_div(n, c.chunk_len));
  return c;
}

int candidates_for(std::int64_t k) { return pow2_at_least(std::max<std::int64_t>(k, 32)); }

int radix_cap(int cap, std::int64_t k) { return std::max(cap, pow2_at_least(k)); }

int radix_candidates(int filter, std::int64_t n, int cap) {
  if (filter <= 0) return 0;
  return int(std::max<std::int64_t>(cap, ceil_div(n, filter)));
}

ParamSpace block_merge_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024}).param("items_per_thread", {2, 4, 8, 16}).param("blocks", {256, 512, 1024, 2048, 4096});
  s.constraint("(block, items_per_thread) instantiated", [](const Config& c, const DeviceInfo&, const Problem&) {
    return instantiated(kBlockMergeTiles, c);
  });
  return s;
}

// Not yet measured on an H200.
Config block_merge_default(const DeviceInfo&) { return {{"block", 256}, {"items_per_thread", 8}, {"blocks", 1024}}; }

ParamSpace radix_select_space() {
  ParamSpace s;
  s.param("block", {256, 512, 1024})
      .param("items_per_thread", {4, 8})
      .param("cap", {1024, 2048, 4096})
      .param("blocks", {512, 1024, 2048, 4096})
      .param("filter", {0, 4, 8, 16});
  s.constraint("(block, items_per_thread) instantiated", [](const Config& c, const DeviceInfo&, const Problem&) {
    return instantiated(kRadixTiles, c);
  });
  return s;
}

// filter 0 (off): measured on an H200, 2026-11-24, 1 x 2^26, k = 100 (`kiln tune`, 10 runs):
// filter 0 415.9 us, filter 16 (never fills on uniform data) 415.4, filter 4 (fills after the
// first pass) 511.6 - the fill pass costs more than the passes it saves; 1 x 2^24, k = 100 with
// filter 4 measured 189.7 us.  The other values are not tuned here.
Config radix_select_default(const DeviceInfo&) {
  return {{"block", 512}, {"items_per_thread", 8}, {"cap", 2048}, {"blocks", 2048}, {"filter", 0}};
}

ParamSpace row_select_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024}).param("items_per_thread", {2, 4, 8, 16}).param("cap", {32, 64, 128, 256});
  s.constraint("(block, items_per_thread) instantiated", [](const Config& c, const DeviceInfo&, const Problem&) {
    return instantiated(kRowSelectTiles, c);
  });
  return s;
}

// Rows of up to 4096 with 512 threads (the fastest tile in the measurement above); cap 64: the
// tuning of that problem put caps 32..256 within 0.3% of each other.
Config row_select_default(const DeviceInfo&) { return {{"block", 512}, {"items_per_thread", 8}, {"cap", 64}}; }

Config row_select_default_for(const DeviceInfo& device, std::int64_t n, std::int64_t k) {
  (void)k;
  Config best = row_select_default(device);
  std::int64_t best_len = -1;
  for (const TileShape& t : kRowSelectTiles) {
    const std::int64_t len = std::int64_t(t.block) * t.items;
    // The smallest tile holding the row; among equal sizes the one with more threads, up to 512
    // (measured on an H200, 2026-11-24, 16384 rows of 4096, k = 64: 512 x 8 758 us, 256 x 16 1001
    // us; 1024 x 4 is left to the tuner).
    if (len < n || (best_len >= 0 && len > best_len)) continue;
    if (t.block > 512 && len < kRowSelectMaxN) continue;
    if (best_len == len && t.block < best.get("block")) continue;
    best = {{"block", t.block}, {"items_per_thread", t.items}, {"cap", 64}};
    best_len = len;
  }
  return best;
}

Support row_select_supports(std::int64_t n, std::int64_t k, const Config& c) {
  if (n > kRowSelectMaxN)
    return Support::no("n = " + std::to_string(n) + " > " + std::to_string(kRowSelectMaxN) + ": the row is kept in registers");
  const std::int64_t len = std::int64_t(c.get_or("block", 0)) * c.get_or("items_per_thread", 0);
  if (n > len)
    return Support::no("n = " + std::to_string(n) + " > block * items_per_thread = " + std::to_string(len));
  if (radix_cap(c.get_or("cap", 256), k) > kRadixMaxCap)
    return Support::no("k = " + std::to_string(k) + ": the selection is sorted in 32 KiB of shared memory");
  return Support::yes();
}

}  // namespace kiln::topk
