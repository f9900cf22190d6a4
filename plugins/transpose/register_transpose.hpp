// The transpose family: op `transpose` (out = in^T, f32) and its variants.
//
//   kiln::Registry reg;
//   register_transpose(reg);       // schema `transpose`, transpose_host, and with CUDA
//                                  // transpose_tiled_multirow, _tiled_padded, _write_coalesced,
//                                  // _naive_2d, _read_coalesced
//   kiln::Runtime rt(std::move(reg), options);
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Adds the `transpose` schema and variants; never throws (a registry refusal comes back as a Status).
kiln::Status register_transpose(kiln::Registry& registry);
