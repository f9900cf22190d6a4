// A progress bar with an ETA on stderr, drawn only when stderr is a terminal (quiet otherwise,
// e.g. in CI logs and pipes).
//
//   kiln::cli::ProgressBar bar("tune gemm");
//   bar.update(done, total, "gemm_tiled [tile=32]");
//   bar.finish();                    // clears the line (also on destruction)
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace kiln::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_label(std::string label) { label_ = std::move(label); }
  void update(std::size_t done, std::size_t total, const std::string& note = "");
  // Prints a line above the bar (a failure, a skipped problem) without garbling it.
  void message(const std::string& line);
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(bool force);
  std::string label_, note_;
  std::size_t done_ = 0, total_ = 0;
  bool enabled_ = false, drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kiln::cli
