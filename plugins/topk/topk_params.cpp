#include "topk_params.hpp"

#include <algorithm>

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
  s.param("block", {256, 512, 1024}).param("items_per_thread", {4, 8}).param("cap", {1024, 2048, 4096}).param("blocks", {512, 1024, 2048, 4096});
  s.constraint("(block, items_per_thread) instantiated", [](const Config& c, const DeviceInfo&, const Problem&) {
    return instantiated(kRadixTiles, c);
  });
  return s;
}

// Not yet measured on an H200.
Config radix_select_default(const DeviceInfo&) {
  return {{"block", 512}, {"items_per_thread", 8}, {"cap", 2048}, {"blocks", 2048}};
}

}  // namespace kiln::topk
