#include "transpose_params.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::transpose {
namespace {

constexpr std::int64_t kMaxGridX = 2147483647;  // gridDim.x limit

}  // namespace

ParamSpace one_d_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024});
  return s;
}

Config one_d_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; 256 threads, 8 blocks fill an sm_90 SM.
  return {{"block", 256}};
}

ParamSpace naive_2d_space() {
  ParamSpace s;
  s.param("block_x", {8, 16, 32, 64}).param("block_y", {1, 2, 4, 8, 16, 32});
  s.constraint("64 <= block_x * block_y <= 1024", [](const Config& c, const DeviceInfo&, const Problem&) {
    const int threads = c.get_or("block_x", 0) * c.get_or("block_y", 0);
    return threads >= 64 && threads <= 1024;
  });
  return s;
}

Config naive_2d_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; a warp reads 128 contiguous bytes of a row of `in`.
  return {{"block_x", 32}, {"block_y", 8}};
}

Support naive_2d_supports(const Problem& problem, const Config& config) {
  const int bx = config.get_or("block_x", 0);
  if (bx <= 0) return Support::no("transpose_naive_2d: bad config");
  if ((problem.dims[1] + bx - 1) / bx > kMaxGridX)
    return Support::no("transpose_naive_2d: n = " + std::to_string(problem.dims[1]) + " needs more than 2^31-1 blocks in x");
  return Support::yes();
}

ParamSpace tiled_padded_space() {
  ParamSpace s;
  s.param("tile", std::vector<int>(std::begin(kPaddedTiles), std::end(kPaddedTiles)));
  return s;
}

Config tiled_padded_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; the seeds' 32 x 32 tile.
  return {{"tile", 32}};
}

// The instantiated kernel of a config for an element size, or null.
const MultirowKernel* multirow_kernel(const Config& c, int elem_bytes) {
  for (const MultirowKernel& k : kMultirowKernels)
    if (k.elem_bytes == elem_bytes && k.tile == c.get_or("tile", 0) && k.block_rows == c.get_or("block_rows", 0) &&
        k.vector_width == c.get_or("vector_width", 0) && k.load_hint == c.get_or("load_hint", 0) &&
        k.store_hint == c.get_or("store_hint", 0))
      return &k;
  return nullptr;
}

ParamSpace tiled_multirow_space() {
  ParamSpace s;
  s.param("tile", {32, 64, 128})
      .param("block_rows", {4, 8, 16, 32})
      .param("vector_width", {1, 2, 4, 8})
      .param("load_hint", {0, 1})
      .param("store_hint", {0, 1})
      .param("tiles_per_block", {1, 2, 4, 8})
      .param("group_rows", {1, 8, 32, kMultirowWholeColumnRows});
  std::vector<Config> instantiated;
  for (const MultirowKernel& k : kMultirowKernels) {
    bool seen = false;  // the same shape and hints for two element sizes
    for (const Config& c : instantiated)
      seen |= c.get_or("tile", 0) == k.tile && c.get_or("block_rows", 0) == k.block_rows &&
              c.get_or("vector_width", 0) == k.vector_width && c.get_or("load_hint", 0) == k.load_hint &&
              c.get_or("store_hint", 0) == k.store_hint;
    if (seen) continue;
    for (int tiles_per_block : {1, 2, 4, 8})
      instantiated.push_back(Config{{"tile", k.tile},
                                    {"block_rows", k.block_rows},
                                    {"vector_width", k.vector_width},
                                    {"load_hint", k.load_hint},
                                    {"store_hint", k.store_hint},
                                    {"tiles_per_block", tiles_per_block},
                                    {"group_rows", 1}});
  }
  for (const MultirowKernel& k : kMultirowGrouped)
    for (int group_rows : kMultirowGroupRows) {
      const Config c{{"tile", k.tile},
                     {"block_rows", k.block_rows},
                     {"vector_width", k.vector_width},
                     {"load_hint", k.load_hint},
                     {"store_hint", k.store_hint},
                     {"tiles_per_block", 1},
                     {"group_rows", group_rows}};
      if (std::find(instantiated.begin(), instantiated.end(), c) == instantiated.end()) instantiated.push_back(c);
    }
  s.only(std::move(instantiated));
  s.constraint("kernel instantiated for the element size (kMultirowKernels)",
               [](const Config& c, const DeviceInfo&, const Problem& p) {
                 return multirow_kernel(c, static_cast<int>(dtype_size(p.dtype))) != nullptr;
               });
  return s;
}

Config tiled_multirow_default(const DeviceInfo& device) {
  (void)device;
  // Measured on an H200, 2026-11-24 (`kiln tune transpose`, 10 runs each): 64 x 64 tiles with
  // scalar accesses and 8 rows per thread beat the float4 configs at 16384^2 (555.5 us against
  // 617.9 for the earlier default, 32 x 32 float4, and 543.4 for cuBLAS geam) and at 4097 x 4099
  // (54.3 us; geam 48.0).  Scalar accesses take any alignment of the element, and this shape is
  // built for 2- and 4-byte types, so one default serves every dtype and view.  Loads through
  // __ldg with the default policy (load_hint 1, the fourth session): 542.0 us at 16384^2 against
  // 555.3 evict-first (cuBLAS geam 542.4 in the same run), 260.8 against 269.8 at 128 x 10^6,
  // 52.6 against 54.8 at 4097 x 4099; for bf16 the tuned best at 4097 x 4099 was this shape with
  // load_hint 1 too (35.8 us; 36.0 with 0; cuBLASLt transform 38.5).
  // Whole tile columns in turn (group_rows 1024; the fifteenth session, H200, every config tuned
  // against cuBLAS geam): consecutive blocks take vertically adjacent tiles of `in`, so the tiles
  // in flight write whole runs of `out`'s rows, the order geam's kernel takes (its grid's x runs
  // down the tile column).  12345 x 6789: 197.4 us against 242.2 row-major (geam 197.7);
  // 8191 x 8193: 157.4 against 189.2 (geam 158.8); 4097 x 4099: 44.3 against 50.7 (geam 47.5);
  // 16384^2: 526.7 against 541.9 (geam 542.9).
  return {{"tile", 64}, {"block_rows", 8}, {"vector_width", 1}, {"load_hint", 1}, {"store_hint", 0},
          {"tiles_per_block", 1}, {"group_rows", kMultirowWholeColumnRows}};
}

Config tiled_multirow_default_for(const DeviceInfo& device, const Problem& problem) {
  Config c = tiled_multirow_default(device);
  // Narrow inputs (at most kMultirowWholeColumns tile columns of 64): whole tile rows in turn
  // (row-major), the mirror of the short matrices' whole columns: a tile column order would read
  // each row of `in` in parts far apart in time.  f32 10^6 x 100 on the H200 (fifteenth session):
  // 230.9 us row-major against 272.8 in whole columns (geam 355.6).  (problem.dims are the logical
  // extents; with both views column-major the kernel sees them swapped, a case this rule ignores.)
  const bool narrow = (problem.dims[1] + 63) / 64 <= kMultirowWholeColumns;
  if (narrow) c.set("group_rows", 1);
  if (dtype_size(problem.dtype) == 2) {
    // 2-byte types moved in 4-byte pairs (fifteenth session, H200): bf16 16384^2 282.1 us against
    // 447.5 for single elements (cuBLASLt's transform 475.3), bf16 100 x 10^6 137.7 against 245.1
    // (199.7).  Views off a 4-byte boundary too (twenty-first session, H200): `out` rows pair
    // from their second element, bf16 333 x 200000 104.6 us against 140.7 for single elements
    // (cuBLASLt 123.4); with `in` off one the scalar kernel runs (docs/performance.md).
    c.set("vector_width", 2);
    c.set("load_hint", 0);
    return c;
  }
  // Measured on an H200, 2026-11-24 (`kiln tune transpose --variants transpose_tiled_multirow`,
  // every config, 10 runs; docs/performance.md, fourth session):
  //  - short side <= 32: 32 x 32 tiles waste less of a partial tile than 64 x 64 (24 x 10^6: 55.6 us
  //    for 32 x 32 float4 with load_hint 1, 64.4 scalar with 4 rows, 123 for the 64 x 64 default);
  //  - rows not 16-byte aligned (odd widths) took evict-first stores while tiles went row-major
  //    (4097 x 4099: 50.3 against 52.6 us); in whole tile columns plain stores are faster there too
  //    (the fifteenth session: 197.4 against 215.6 us at 12345 x 6789, 44.3 against 47.8 at 4097 x
  //    4099), so the default is one config for every alignment.
  const bool aligned16 = problem.align_bytes >= 16;
  const std::int64_t shorter = std::min(problem.dims[0], problem.dims[1]);
  if (shorter <= 32) {
    if (aligned16) return {{"tile", 32}, {"block_rows", 8}, {"vector_width", 4}, {"load_hint", 1}, {"store_hint", 0},
                           {"tiles_per_block", 1}, {"group_rows", 1}};
    return {{"tile", 32}, {"block_rows", 4}, {"vector_width", 1}, {"load_hint", 0}, {"store_hint", 0},
            {"tiles_per_block", 1}, {"group_rows", 1}};
  }
  // Small aligned matrices (at most 2^22 elements, 16 MiB): float4 accesses, evict-first stores,
  // row-major (fifteenth session, H200): 2048^2 12.2-12.8 us against 14.0 for the default (geam
  // 13.2), 1024^2 6.7 against 7.1; at 4096^2 the default is ahead (38.3 against 39.4).
  if (aligned16 && problem.dims[0] * problem.dims[1] <= (std::int64_t{1} << 22))
    return {{"tile", 64}, {"block_rows", 8}, {"vector_width", 4}, {"load_hint", 0}, {"store_hint", 1},
            {"tiles_per_block", 1}, {"group_rows", 1}};
  return c;
}

bool multirow_pairs_any_alignment(const Config& config, int elem_bytes) {
  return elem_bytes == 2 && config.get_or("vector_width", 1) == 2 && config.get_or("tile", 0) == 64;
}

Support tiled_multirow_supports(const Problem& problem, const Config& config) {
  const int elem = static_cast<int>(dtype_size(problem.dtype));
  if (multirow_kernel(config, elem) == nullptr)
    return Support::no("transpose_tiled_multirow: " + config.to_string() + " is not instantiated for " +
                       std::string(dtype_name(problem.dtype)));
  const int bytes = config.get_or("vector_width", 1) * elem;
  if (bytes > elem && problem.align_bytes < bytes && !multirow_pairs_any_alignment(config, elem))
    return Support::no("transpose_tiled_multirow: vector_width=" + std::to_string(config.get_or("vector_width", 1)) +
                       " needs " + std::to_string(bytes) + "-byte aligned pointers and row pitches, these are " +
                       std::to_string(problem.align_bytes) + "-byte aligned");
  return Support::yes();
}

SkinnyTile skinny_tile(std::int64_t m, std::int64_t n, int tile_elems, int span_multiple) {
  SkinnyTile t;
  const bool wide = m <= n;  // the short side spans the tile
  const std::int64_t shorter = wide ? m : n, longer = wide ? n : m;
  std::int64_t span = std::max<std::int64_t>(1, tile_elems / std::max<std::int64_t>(1, shorter));
  if (span >= 32)
    span -= span % 32;
  else if (span_multiple > 1 && span >= span_multiple)
    span -= span % span_multiple;
  span = std::min(span, longer);
  t.rows = static_cast<int>(wide ? shorter : span);
  t.cols = static_cast<int>(wide ? span : shorter);
  t.pitch = t.rows | 1;
  return t;
}

SkinnyPairs skinny_pairs(std::uintptr_t in, std::uintptr_t out, std::int64_t ld_in, std::int64_t ld_out, std::int64_t m,
                         std::int64_t n, const SkinnyTile& tile) {
  // A pair starts at an even column of a row: aligned when the pointer is, every row start is
  // (an even stride, or one row only) and every tile starts at an even column (an even tile
  // extent, or one tile along that side).
  SkinnyPairs p;
  p.in = in % 4 == 0 && (m == 1 || ld_in % 2 == 0) && (tile.cols % 2 == 0 || n <= tile.cols);
  p.out = out % 4 == 0 && (n == 1 || ld_out % 2 == 0) && (tile.rows % 2 == 0 || m <= tile.rows);
  return p;
}

ParamSpace skinny_space() {
  ParamSpace s;
  s.param("block", std::vector<int>(std::begin(kSkinnyBlocks), std::end(kSkinnyBlocks)))
      .param("tile_bytes", {16384, 32768, 65536})
      .param("access_bytes", {2, 4});
  s.constraint("access_bytes >= element size", [](const Config& c, const DeviceInfo&, const Problem& p) {
    return c.get_or("access_bytes", 4) >= static_cast<int>(dtype_size(p.dtype));
  });
  return s;
}

Config skinny_default(const DeviceInfo& device) {
  (void)device;
  // 32 KiB tiles (8192 floats: 100 x 64 for a 100-row input), 512 threads, 8 loads each in
  // flight; six such blocks fit an sm_90 SM.  f32 at 100 x 10^6 on an H200: 312.7 us, 1.08x cuBLAS
  // geam (2026-11-24).  4-byte accesses for every type: 2-byte elements one at a time reached
  // 1333 GB/s at bf16 100 x 10^6 against 2559 for f32; in pairs with this config (16384 halves),
  // 186.2 us against cuBLASLt's transform at 200.0 (1.07x), 183.0 at 10^6 x 100 (222.1, 1.21x).
  return {{"block", 512}, {"tile_bytes", 32768}, {"access_bytes", 4}};
}

Support skinny_supports(const Problem& problem) {
  const std::int64_t shorter = std::min(problem.dims[0], problem.dims[1]);
  if (shorter > kSkinnyMaxShort)
    return Support::no("transpose_skinny: for matrices with a side of at most " + std::to_string(kSkinnyMaxShort) +
                       ", this one is " + std::to_string(problem.dims[0]) + " x " + std::to_string(problem.dims[1]));
  if (problem.align_bytes < static_cast<int>(dtype_size(problem.dtype)))
    return Support::no("transpose_skinny: needs pointers and row pitches aligned to the element size");
  return Support::yes();
}

}  // namespace kiln::transpose
