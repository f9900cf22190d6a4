#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "table.hpp"
#include "terminal.hpp"

namespace kiln::cli {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::size_t done, std::size_t total, const std::string& note) {
  done_ = done;
  total_ = total;
  note_ = note;
  draw(done >= total);
}

void ProgressBar::restart() {
  start_ = std::chrono::steady_clock::now();
  done_ = total_ = 0;
  note_.clear();
}

void ProgressBar::set_overall(std::string line) {
  overall_ = std::move(line);
  if (enabled_ && drawn_) draw(true);
}

void ProgressBar::message(const std::string& line) {
  if (!enabled_) {
    std::cerr << line << "\n";
    return;
  }
  clear();
  std::cerr << line << "\n";
  draw(true);
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) {
    clear();
    std::cerr << std::flush;
  }
}

// Erases what draw() printed: the bar's line and, when drawn, the overall line above it.
void ProgressBar::clear() {
  if (!drawn_) return;
  std::cerr << "\r\033[K";
  if (overall_drawn_) std::cerr << "\033[1A\r\033[K";
  drawn_ = false;
  overall_drawn_ = false;
}

void ProgressBar::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // One column short of the terminal: writing the last column makes some terminals wrap.
  const std::size_t columns = terminal_columns(STDERR_FILENO);
  const std::size_t fit = columns > 1 ? columns - 1 : 0;
  const int kWidth = fit == 0 || fit >= 100 ? 24 : (fit >= 60 ? 16 : 8);
  const double f = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0;
  const int filled = static_cast<int>(f * kWidth);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '=') +
                    std::string(static_cast<std::size_t>(kWidth - filled), ' ') + "]";
  std::string eta = done_ > 0 && total_ > done_ ? " ETA " + clock_text(elapsed / done_ * (total_ - done_)) : "";
  std::string line = label_ + " " + bar + " " + std::to_string(done_) + "/" + std::to_string(total_) + " " +
                     clock_text(elapsed) + eta;
  if (!note_.empty()) line += "  " + note_;
  line = truncate_to_width(line, fit > 0 ? fit : 150);
  clear();
  if (!overall_.empty()) {
    std::cerr << truncate_to_width(overall_, fit > 0 ? fit : 150) << "\n";
    overall_drawn_ = true;
  }
  std::cerr << line << std::flush;
  drawn_ = true;
}

}  // namespace kiln::cli
