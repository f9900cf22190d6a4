#include "terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kiln::cli {
namespace {
bool g_wide = false;
}  // namespace

std::size_t terminal_columns(int fd) {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return static_cast<std::size_t>(n);
  }
  if (::isatty(fd) != 1) return 0;
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

void set_wide_output(bool wide) { g_wide = wide; }

std::size_t output_columns() { return g_wide ? 0 : terminal_columns(STDOUT_FILENO); }

}  // namespace kiln::cli
