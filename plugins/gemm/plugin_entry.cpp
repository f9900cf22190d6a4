// The gemm plugin's exported entry (libkiln_gemm.so).
#include <kiln/plugin.hpp>

#include "register_gemm.hpp"

KILN_PLUGIN("gemm", "0.1.0", register_gemm)
