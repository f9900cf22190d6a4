// A progress bar with an ETA on stderr, drawn only when stderr is a terminal (quiet otherwise,
// e.g. in CI logs and pipes).  Each line fits the terminal's width (terminal.hpp), so it never
// wraps and leaves fragments behind.
//
//   kiln::cli::ProgressBar bar("tune gemm");
//   bar.set_overall("plan default: 3/42 problems, ETA 1:10:00");   // optional line above the bar
//   bar.update(done, total, "gemm_tiled [tile=32]");
//   bar.finish();                    // clears the lines (also on destruction)
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace kiln::cli {

// "1:05" (minutes:seconds) or "1:02:05".
std::string clock_text(double seconds);

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_label(std::string label) { label_ = std::move(label); }
  // Starts the clock (elapsed time and ETA) again, for the next piece of work.
  void restart();
  // A line drawn above the bar (a plan's overall progress); "" for none.
  void set_overall(std::string line);
  void update(std::size_t done, std::size_t total, const std::string& note = "");
  // Prints a line above the bar (a failure, a skipped problem) without garbling it.
  void message(const std::string& line);
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(bool force);
  void clear();
  std::string label_, note_, overall_;
  bool overall_drawn_ = false;
  std::size_t done_ = 0, total_ = 0;
  bool enabled_ = false, drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kiln::cli
