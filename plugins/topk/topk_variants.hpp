// The CUDA variants of topk (only built with the CUDA backend):
//   topk_block_merge   per-chunk running top-k with threshold filtering, then a per-row merge
//   topk_grid_radix16  f16/bf16 rows spread over the resident grid, the k-th value from two byte histograms
//   topk_grid_select   a row spread over the resident grid, the k-th rank's bin by grid-wide histograms
//   topk_radix_select  radix select of the k-th key, gather, sort of the selection
//   topk_row_select    one block per row held in registers, the radix select on chip
//   topk_sample_select threshold from a sample, one filtering pass, selection on the candidates
//   topk_warp_select   one warp per small row held in registers, bitwise threshold search, one filter
#pragma once
#include <memory>
#include <string>

#include <kiln/variant.hpp>

namespace kiln::topk {

std::shared_ptr<Variant> make_topk_block_merge();
std::shared_ptr<Variant> make_topk_grid_radix16();
std::shared_ptr<Variant> make_topk_grid_select();
std::shared_ptr<Variant> make_topk_radix_select();
std::shared_ptr<Variant> make_topk_row_select();
std::shared_ptr<Variant> make_topk_sample_select();
std::shared_ptr<Variant> make_topk_warp_select();

// What the CUDA variants read from the arguments.  x and values hold `dtype` elements (f32, f16
// or bf16; topk_block_merge takes f32 only).
struct TopkLaunch {
  DType dtype = f32;
  const void* x = nullptr;
  std::int64_t x_stride = 0;
  void* values = nullptr;
  std::int64_t v_stride = 0;
  std::int32_t* indices = nullptr;
  std::int64_t i_stride = 0;
  std::int64_t rows = 0, n = 0;
  int k = 0;
  int largest = 1;
};
TopkLaunch topk_launch_of(const Args& args, const Problem& p);
// f32: tensors 4-byte aligned; f16/bf16: 2-byte aligned (indices checked at launch); k within
// the variant's limit.
Support topk_cuda_support(const Problem& p, std::int64_t max_k, const std::string& why_max);
// A failure naming `variant` when the indices are not 4-byte aligned (see topk_cuda_support).
Status topk_check_indices(const TopkLaunch& l, const std::string& variant);

}  // namespace kiln::topk
