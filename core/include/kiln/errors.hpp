// Error policy, the same everywhere:
//  - the public API throws a kiln::Error subclass whose message names the argument and what was
//    expected;
//  - code inside a plugin never lets an exception out: functions a plugin exposes return a Status
//    (or a Support), and the host turns a failed Status into an exception.
//
//   try { rt.op("gemm")({a, b, c}, stream); }
//   catch (const kiln::ShapeError& e) { std::cerr << e.what(); }
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A public API argument is wrong (bad value, null pointer, unknown name).
class ArgumentError : public Error { using Error::Error; };
class ShapeError : public ArgumentError { using ArgumentError::ArgumentError; };
class DTypeError : public ArgumentError { using ArgumentError::ArgumentError; };
class DeviceError : public ArgumentError { using ArgumentError::ArgumentError; };
class UnknownOpError : public ArgumentError { using ArgumentError::ArgumentError; };
// No registered variant supports the problem; the message lists each variant's reason.
class NoVariantError : public Error { using Error::Error; };
// A CUDA runtime call failed.
class CudaError : public Error { using Error::Error; };
// The registry refused a registration (duplicate name, unknown op, ...).
class RegistryError : public Error { using Error::Error; };
// A tuning database file could not be read or written.
class TuningDbError : public Error { using Error::Error; };

// A scalar argument as text for an error message: the shortest form that reads back as the same
// double ("0.5", "1e-09", "1e+300", "nan", "-inf"), where std::to_string would print six fixed
// decimals (1e-09 as "0.000000", 1e+300 as 301 digits).
std::string scalar_text(double v);

// Which exception a failed Status becomes on the host side.
enum class ErrorKind { none, argument, shape, dtype, device, unsupported, cuda, internal };

// Result of a call across the plugin boundary.  ok() is the cheap common case (no allocation).
class Status {
 public:
  Status() = default;
  static Status success() { return {}; }
  static Status fail(ErrorKind kind, std::string message) { return Status(kind, std::move(message)); }
  bool ok() const { return kind_ == ErrorKind::none; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // Throws the matching kiln::Error subclass when not ok(); `context` prefixes the message.
  void throw_if_error(const std::string& context = {}) const;

 private:
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind_ = ErrorKind::none;
  std::string message_;
};

}  // namespace kiln
