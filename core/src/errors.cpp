#include "kiln/errors.hpp"

namespace kiln {

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
