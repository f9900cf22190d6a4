// The elementwise family: op `add` (c = a + b) and its variants.
//
//   kiln::Registry reg;
//   register_elementwise(reg);            // schema `add`, add_host, and with CUDA
//                                         // add_vectorized, add_grid_stride, add_2d
//   kiln::Runtime rt(std::move(reg), options);
#pragma once
#include <kiln/errors.hpp>
#include <kiln/registry.hpp>

// Adds the `add` schema and variants; never throws (a registry refusal comes back as a Status).
kiln::Status register_elementwise(kiln::Registry& registry);
