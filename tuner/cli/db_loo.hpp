// kiln db loo: leave-one-out evaluation of dispatch from evidence over a device's tuned entries
// (see db_loo.cpp).
#pragma once
#include <string>

#include "kiln/device.hpp"
#include "kiln/dispatcher.hpp"

namespace kiln::cli {

struct DbLooOptions {
  std::string op;          // only this op (empty: all)
  std::string device_key;  // the database device key (empty: this GPU's, else the first GPU key)
  bool verbose = false;    // list the entries where another variant than the winner is chosen
  bool json = false;
};

int run_db_loo(const DbLooOptions& options);

// A DeviceInfo whose fingerprint is `key` ("NVIDIA H200|sm_90|132sm"): enough for matching the
// database's device levels and for the wave model when that GPU is not in this machine (kiln db
// loo, kiln explain --device-key); false when the key is not NAME|sm_XY|Nsm.
bool device_from_key(const std::string& key, DeviceInfo& out);

// The variant a decision names: the loaded one, else (an entry trusted for a GPU not here, whose
// variant is not loaded) the entry's; "" when none.
std::string decided_variant(const Decision& d);

}  // namespace kiln::cli
