// kiln db loo: leave-one-out evaluation of dispatch from evidence over a device's tuned entries
// (see db_loo.cpp).
#pragma once
#include <string>

namespace kiln::cli {

struct DbLooOptions {
  std::string op;          // only this op (empty: all)
  std::string device_key;  // the database device key (empty: this GPU's, else the first GPU key)
  bool verbose = false;    // list the entries where another variant than the winner is chosen
  bool json = false;
};

int run_db_loo(const DbLooOptions& options);

}  // namespace kiln::cli
