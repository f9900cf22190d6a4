#include "kiln/errors.hpp"

#include <cstdio>
#include <cstdlib>

namespace kiln {

std::string scalar_text(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) return buf;  // never true for NaN: it takes 17 digits' "nan"
  }
  return buf;
}

void Status::throw_if_error(const std::string& context) const {
  if (ok()) return;
  const std::string what = context.empty() ? message_ : context + ": " + message_;
  switch (kind_) {
    case ErrorKind::none: return;
    case ErrorKind::argument: throw ArgumentError(what);
    case ErrorKind::shape: throw ShapeError(what);
    case ErrorKind::dtype: throw DTypeError(what);
    case ErrorKind::device: throw DeviceError(what);
    case ErrorKind::unsupported: throw NoVariantError(what);
    case ErrorKind::cuda: throw CudaError(what);
    case ErrorKind::internal: throw Error(what);
  }
  throw Error(what);
}

}  // namespace kiln
