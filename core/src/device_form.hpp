// What is wrong with a Device filled in by hand: one that Device::host() or Device::cuda(n) could
// not give (Device{host, 3}, Device{cuda, -5}, a kind outside DeviceKind).  Checks the form only,
// not whether the device exists, so a problem may still name a GPU this machine lacks.
//
//   if (!detail::well_formed(d))
//     throw DeviceError(name + ": argument 'device'" + detail::malformed_device(d));
//     // "gemm: argument 'device' has Device{host, ordinal 3}: the host has ordinal -1 (...)"
#pragma once
#include <string>

#include "kiln/device.hpp"

namespace kiln::detail {

// Inline: op()'s hot path checks every argument's device with it.
inline bool well_formed(Device d) { return (d.is_host() && d.ordinal == -1) || (d.is_cuda() && d.ordinal >= 0); }

// Empty for a well-formed Device; else " has Device{...}: <what was expected>".
std::string malformed_device(Device d);

}  // namespace kiln::detail
