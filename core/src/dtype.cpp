#include "kiln/dtype.hpp"

#include <string>

#include "kiln/errors.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln {

DType parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  throw ArgumentError("unknown dtype '" + detail::printable(std::string(name)) +
                      "': expected one of f32, f64, f16, bf16, i32, u32, u8, i64");
}

}  // namespace kiln
