// Every family plugin's schemas and variants in one registry, registered in code (no library load).
#pragma once
#include <kiln/kiln.hpp>

#include "register_elementwise.hpp"
#include "register_gemm.hpp"
#include "register_gemv.hpp"
#include "register_histogram.hpp"
#include "register_reduction.hpp"
#include "register_topk.hpp"
#include "register_transpose.hpp"

namespace kiln_test {

inline const kiln::Registry& family_registry() {
  static const kiln::Registry registry = [] {
    kiln::Registry r;
    for (auto reg : {register_elementwise, register_gemm, register_gemv, register_histogram, register_reduction,
                     register_topk, register_transpose})
      reg(r).throw_if_error("registering a family");
    return r;
  }();
  return registry;
}

}  // namespace kiln_test
