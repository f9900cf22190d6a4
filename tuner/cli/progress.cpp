#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace kiln::cli {
namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

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

void ProgressBar::message(const std::string& line) {
  if (!enabled_) {
    std::cerr << line << "\n";
    return;
  }
  if (drawn_) std::cerr << "\r\033[K";
  std::cerr << line << "\n";
  drawn_ = false;
  draw(true);
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

void ProgressBar::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 24;
  const double f = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0;
  const int filled = static_cast<int>(f * kWidth);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '=') +
                    std::string(static_cast<std::size_t>(kWidth - filled), ' ') + "]";
  std::string eta = done_ > 0 && total_ > done_ ? " ETA " + clock_text(elapsed / done_ * (total_ - done_)) : "";
  std::string line = label_ + " " + bar + " " + std::to_string(done_) + "/" + std::to_string(total_) + " " +
                     clock_text(elapsed) + eta;
  if (!note_.empty()) line += "  " + note_;
  if (line.size() > 150) line.resize(150);
  std::cerr << "\r\033[K" << line << std::flush;
  drawn_ = true;
}

}  // namespace kiln::cli
