#pragma once
// A progress bar with ETA on stderr: redrawn in place on a terminal (at most 5 times a
// second), one line per 10% otherwise (logs of batch jobs stay short).
#include <chrono>
#include <cstddef>
#include <string>

namespace fusim::sweep {

class ProgressBar {
 public:
  // `total` units of which `already_done` were finished by an earlier run (--resume).
  ProgressBar(std::size_t total, std::size_t already_done, bool enabled);
  void advance(std::size_t units = 1);
  void finish();

  // "[=====>    ] 45/100 units  12.3s elapsed  ETA 15s" (tested; no I/O).
  static std::string render(std::size_t done, std::size_t total, double elapsed_s, double eta_s,
                            int width);

 private:
  void draw(bool final_line);

  std::size_t total_, done_, done_at_start_;
  bool enabled_, tty_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace fusim::sweep
