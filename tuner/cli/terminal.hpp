// How wide the CLI's output may be: tables and the progress bar fit the terminal.
//
//   std::size_t cols = kiln::cli::output_columns();   // 0: no limit (--wide, or not a terminal)
#pragma once
#include <cstddef>

namespace kiln::cli {

// Columns of the terminal on `fd`: $COLUMNS when it is a positive number, else the terminal's
// width when `fd` is a terminal, else 0 (no limit: a pipe or a file gets whole lines).
std::size_t terminal_columns(int fd);

// `--wide`: tables print every column in full, however wide.
void set_wide_output(bool wide);

// The width stdout's tables must fit: 0 (no limit) with --wide, else terminal_columns(stdout).
std::size_t output_columns();

}  // namespace kiln::cli
