// kiln devices: the host and every CUDA device, with the fingerprint the tuning database keys on.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "devices_report.hpp"
#include "json.hpp"
#include "json_document.hpp"

namespace kiln::cli {

Command make_devices_command(CLI::App& parent) {
  auto json = std::make_shared<bool>(false);
  Command c;
  c.app = parent.add_subcommand("devices", "List devices with their fingerprints");
  c.app->add_flag("--json", *json, "Print JSON");
  c.usage = "usage: kiln devices [--json]";
  c.run = [json] {
    const auto& devices = enumerate_devices();
    if (*json) {
      std::cout << json_document().set("devices", devices_json(devices)).dump() << "\n";
    } else {
      print_devices(std::cout, devices);
    }
    return kExitOk;
  };
  return c;
}

}  // namespace kiln::cli
