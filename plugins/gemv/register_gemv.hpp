// The gemv family: op `gemv` (y = A x, f32) and its variants.
//
//   kiln::Registry reg;
//   register_gemv(reg);            // schema `gemv`, gemv_host, and with CUDA gemv_warp_per_row,
//                                  // gemv_smem_x, gemv_row_per_thread
//   kiln::Runtime rt(std::move(reg), options);
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Adds the `gemv` schema and variants; never throws (a registry refusal comes back as a Status).
kiln::Status register_gemv(kiln::Registry& registry);
