// The device table shared by `kiln devices` and `kiln demo`.
#pragma once
#include <ostream>
#include <vector>

#include <kiln/device.hpp>

#include "json.hpp"

namespace kiln::cli {

void print_devices(std::ostream& out, const std::vector<DeviceInfo>& devices);
Json devices_json(const std::vector<DeviceInfo>& devices);

}  // namespace kiln::cli
