#include "pool_progress.hpp"

#include <sys/ioctl.h>
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

std::size_t terminal_width() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10) return w.ws_col;
  return 120;
}

}  // namespace

PoolProgress::PoolProgress(std::vector<std::string> workers, std::size_t total)
    : workers_(std::move(workers)), activity_(workers_.size(), "starting"), total_(total),
      enabled_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()), last_(start_) {}

PoolProgress::~PoolProgress() { finish(); }

void PoolProgress::set_activity(std::size_t worker, std::string text) {
  if (worker >= activity_.size()) return;
  activity_[worker] = std::move(text);
  draw(false);
}

void PoolProgress::set_done(std::size_t done) {
  done_ = done;
  draw(true);
}

void PoolProgress::message(const std::string& line) {
  clear();
  std::cerr << line << "\n" << std::flush;
  draw(true);
}

void PoolProgress::print_out(const std::string& text) {
  clear();
  std::cout << text << std::flush;
  draw(true);
}

void PoolProgress::finish() { clear(); }

std::string PoolProgress::summary_line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string s = std::to_string(done_) + "/" + std::to_string(total_) + " done, " + clock_text(elapsed) + " elapsed";
  if (done_ > 0 && total_ > done_) s += ", ETA " + clock_text(elapsed / static_cast<double>(done_) * (total_ - done_));
  return s;
}

void PoolProgress::clear() {
  if (!enabled_ || lines_drawn_ == 0) return;
  // Back to the first line of the display, then erase to the end of the screen.
  std::string out = "\r";
  if (lines_drawn_ > 1) out += "\033[" + std::to_string(lines_drawn_ - 1) + "A";
  out += "\033[J";
  std::cerr << out << std::flush;
  lines_drawn_ = 0;
}

void PoolProgress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && lines_drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const std::size_t width = terminal_width() - 1;  // never wrap: the cursor arithmetic counts lines
  constexpr std::size_t kBar = 24;
  const double f = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0;
  const auto filled = static_cast<std::size_t>(f * kBar);
  std::vector<std::string> lines;
  lines.push_back("tune [" + std::string(filled, '=') + std::string(kBar - filled, ' ') + "] " + summary_line());
  for (std::size_t i = 0; i < workers_.size(); ++i) lines.push_back("  " + workers_[i] + "  " + activity_[i]);
  std::string out;
  if (lines_drawn_) {
    out += "\r";
    if (lines_drawn_ > 1) out += "\033[" + std::to_string(lines_drawn_ - 1) + "A";
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string& l = lines[i];
    if (l.size() > width) l.resize(width);
    out += "\033[K" + l + (i + 1 < lines.size() ? "\n" : "");
  }
  std::cerr << out << std::flush;
  lines_drawn_ = lines.size();
}

}  // namespace kiln::cli
