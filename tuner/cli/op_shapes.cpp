#include "op_shapes.hpp"

#include <map>

namespace kiln::cli {
namespace {

struct Shapes {
  const char* demo_gpu;
  const char* demo_host;
  std::vector<std::string> verify;
};

// Dims per the ops contract: add {m,n}, dot/reduce_sum {n,out16}, histogram {n}, gemm
// {m,n,k,tf32,batch,ta,tb,c16}, gemv {m,n,y16}, transpose {m,n}, histogram_range {n,bins}, topk {rows,n,k,largest}.
const std::map<std::string, Shapes>& known() {
  static const std::map<std::string, Shapes> table = {
      {"add", {"4096x4096", "512x512", {"1x1", "1x7", "3x5", "17x33", "31x257", "127x131", "1x4099", "257x1023"}}},
      // out16=1 / y16=1 (the result in the f16 / bf16 input type) apply to half dtypes only; verify
      // skips them for f32 and i32 with a note.
      {"dot", {"16777216", "1048576", {"1", "7", "9", "31", "1000", "4099", "65537", "1048579", "17,out16=1", "65537,out16=1"}}},
      {"reduce_sum",
       {"16777216", "1048576", {"1", "7", "9", "31", "1000", "4099", "65537", "1048579", "17,out16=1", "65537,out16=1"}}},
      {"gemm",
       {"1024x1024x1024", "128x128x128",
        {"1x1x1", "7x5x3", "17x33x65", "31x1x129", "64x64x64", "127x129x131", "257x255x253", "64x64x64x1",
         "127x129x131x1", "1x257x33x1",
         // column-major operands and batches
         "37x29x45,ta=1,tb=1", "33x17x41,batch=3,tb=1", "20x36x52,batch=2,ta=1"}}},
      {"gemv",
       {"4096x4096", "512x512",
        {"1x1", "7x5", "31x257", "257x31", "1023x1025", "4096x33", "33x4099", "7x9,y16=1", "33x4099,y16=1"}}},
      {"transpose", {"4096x4096", "512x512", {"1x1", "1x7", "7x1", "33x31", "129x257", "1025x1023"}}},
      {"histogram", {"67108864", "1048576", {"1", "7", "255", "4099", "65537", "1000003"}}},
      {"histogram_range",
       {"16777216x256", "1048576x256", {"1x1", "7x3", "4099x256", "65537x1000", "100003x7"}}},
      {"topk",
       {"64x65536x64x1", "16x4096x32x1",
        {"1x1x1x1", "3x7x3x1", "5x257x16x1", "2x4099x100x1", "4x33x32x0", "1x1000x1000x1", "3x1025x1x0"}}},
  };
  return table;
}

// name=value,... with `value` for every dim without a default.
std::string generic(const OpSchema& s, const std::vector<long>& values) {
  std::string out;
  std::size_t k = 0;
  for (const std::string& d : s.dim_names) {
    if (s.dim_defaults.count(d)) continue;
    out += (out.empty() ? "" : ",") + d + "=" + std::to_string(values[k++ % values.size()]);
  }
  return out;
}

}  // namespace

std::string demo_shape(const OpSchema& schema, bool gpu) {
  auto it = known().find(schema.name);
  if (it != known().end()) return gpu ? it->second.demo_gpu : it->second.demo_host;
  return generic(schema, {gpu ? 1024L : 64L});
}

std::vector<std::string> verify_shapes(const OpSchema& schema) {
  auto it = known().find(schema.name);
  if (it != known().end()) return it->second.verify;
  return {generic(schema, {1}), generic(schema, {7, 5, 3}), generic(schema, {33, 17, 65}), generic(schema, {129, 31, 7})};
}

}  // namespace kiln::cli
