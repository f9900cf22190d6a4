// gemm_split_k: how k is cut into slices, and the variant's tuning space.  Host code, shared by
// the variant's supports(), workspace_bytes() and launch so that all three agree.
//
//   SplitKPlan plan = split_k_plan(128, 128, 65536, /*bm=*/64, /*bn=*/64, /*splits=*/0, /*sms=*/132);
//   // plan.splits = 66 slices of plan.k_chunk = 1008 columns (the last one shorter), partial
//   // products in plan.workspace_bytes = 66 * 128 * 128 * 4 bytes
#pragma once
#include <cstddef>
#include <cstdint>

#include "kiln/device.hpp"
#include "kiln/param_space.hpp"

namespace kiln::gemm {

// Slices of k narrower than this do too little work per block to pay for their partial tile.
inline constexpr std::int64_t kSplitKMinAutoChunk = 256;
// Slices start at multiples of this many columns, which keeps 16-byte (float4) alignment of A.
inline constexpr std::int64_t kSplitKChunkQuantum = 16;
// From this m on, skinny problems (n <= 32) default to the 256 x 32 row (split_k_default_for).
inline constexpr std::int64_t kSplitKTallSkinnyM = 4096;
// The partial sums (splits * m * n floats) may take at most this much device memory.
inline constexpr std::size_t kSplitKMaxWorkspace = std::size_t(1) << 30;

struct SplitKPlan {
  int splits = 1;   // slices; < 2 means split-k does not apply
  int k_chunk = 0;  // columns per slice (the last slice takes the rest)
  // The partial products: `splits` m x n slices, rows of `ld` floats (n rounded up to 4 so that
  // every row and slice starts 16-byte aligned for the float4 epilogue), slice s at s * stride.
  std::int64_t ld = 0, stride = 0;
  std::size_t workspace_bytes = 0;
};

// `splits` = 0 (auto): as many slices as keep about two blocks per SM busy given the output tiles,
// each at least kSplitKMinAutoChunk deep.  Otherwise that many slices, rounded so none is empty.
SplitKPlan split_k_plan(std::int64_t m, std::int64_t n, std::int64_t k, int bm, int bn, int splits, int sms);

// The register-blocked tile params (a subset of kRegisterBlockedConfigs rows) and splits in
// {0 (auto), 4, 16, 64}.
ParamSpace split_k_space();
// The kRegisterBlockedConfigs row of a split_k config, or -1.
int split_k_row(const Config& c);
Config split_k_default(const DeviceInfo& d);
Config split_k_default_for(const DeviceInfo& d, const Problem& p);  // 128 x 64 tiles, auto splits

}  // namespace kiln::gemm
