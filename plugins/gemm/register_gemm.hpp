// Registers the gemm op schema and its variants:
//
//   kiln::Registry reg;
//   register_gemm(reg);   // schema "gemm", gemm_host, and the CUDA variants when built with CUDA
#pragma once
#include "kiln/errors.hpp"
#include "kiln/registry.hpp"

kiln::Status register_gemm(kiln::Registry& registry);
