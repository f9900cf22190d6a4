// The progress display of `kiln tune --devices`: an overall bar with an ETA, then one line per
// worker saying what it is doing, redrawn in place on stderr when it is a terminal (quiet
// otherwise: each finished problem's report on stdout is the log).
//
//   kiln::cli::PoolProgress p({"cuda:0", "cuda:1"}, 40);
//   p.set_activity(1, "gemm f32|m=4096|n=4096|k=4096  12/200  gemm_tiled [BM=64]");
//   p.set_done(3);
//   p.message("[cuda:1] worker died");    // a line above the display
//   p.print_out(report_text);             // stdout, without garbling the display
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace kiln::cli {

class PoolProgress {
 public:
  PoolProgress(std::vector<std::string> workers, std::size_t total);
  ~PoolProgress();
  PoolProgress(const PoolProgress&) = delete;
  PoolProgress& operator=(const PoolProgress&) = delete;

  void set_activity(std::size_t worker, std::string text);
  void set_done(std::size_t done);
  void message(const std::string& line);      // stderr
  void print_out(const std::string& text);    // stdout
  void finish();                              // clears the display
  bool enabled() const { return enabled_; }

  // "3/40 done, 0:42 elapsed, ETA 4:10" (the ETA from the problems finished so far).
  std::string summary_line() const;

 private:
  void draw(bool force);
  void clear();
  std::vector<std::string> workers_, activity_;
  std::size_t total_ = 0, done_ = 0, lines_drawn_ = 0;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kiln::cli
