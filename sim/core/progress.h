#pragma once
// The one progress reporter of every long command (issue 23, point 5): sweep's units and
// point checks, simulate's orderings, the backend's measurement. On stderr, with the rate
// and an ETA from this run's own pace; redrawn in place on a terminal (at most 5 times a
// second), one line per 10% otherwise, so that batch logs stay short (simulate wrote ~60
// carriage-return updates per ordering into them before). Nothing is shown for work that
// ends within `delay_s` seconds.
#include <chrono>
#include <cstddef>
#include <string>

namespace fusim {

class Progress {
 public:
  // `label` leads each line ("sweep", "simulate eager"); `total` units (`unit` names them,
  // "units", "points"; "%" for work measured as a fraction, see set_fraction), of which
  // `already_done` were finished by an earlier run (sweep --resume).
  Progress(std::string label, std::size_t total, std::size_t already_done, bool enabled,
           std::string unit = "units", double delay_s = 0);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void advance(std::size_t units = 1);
  void set_fraction(double fraction);  // for unit "%": the share done, in [0, 1]
  // The last line (on a terminal: ends the redrawn one) when anything was shown.
  void finish();
  ~Progress() { finish(); }

  // "[=====>    ] 45/100 units  3.7 units/s  12.3s elapsed  ETA 15s"; with unit "%":
  // "[=====>    ] 45%  12.3s elapsed  ETA 15s" (tested; no I/O). eta_s < 0: unknown.
  static std::string render(std::size_t done, std::size_t total, double elapsed_s, double eta_s,
                            int width, const std::string& unit = "units", double rate = -1);

 private:
  void update();
  void draw(bool final_line);

  std::string label_, unit_;
  std::size_t total_, done_, done_at_start_;
  bool enabled_, tty_, shown_ = false;
  double delay_s_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace fusim
