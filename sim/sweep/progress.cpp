#include "sweep/progress.h"

#include <fmt/format.h>
#include <unistd.h>
#include <cstdio>

namespace fusim::sweep {
namespace {

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::size_t total, std::size_t already_done, bool enabled)
    : total_(total),
      done_(already_done),
      done_at_start_(already_done),
      enabled_(enabled && total > already_done),
      tty_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (enabled_ && already_done > 0)
    std::fprintf(stderr, "sweep: resuming, %zu of %zu units already done\n", already_done, total);
}

std::string ProgressBar::render(std::size_t done, std::size_t total, double elapsed_s, double eta_s,
                                int width) {
  int filled = total ? static_cast<int>(static_cast<double>(done) / total * width) : width;
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
  std::string eta = eta_s < 0 ? "--" : duration_text(eta_s);
  return fmt::format("[{}] {}/{} units  {} elapsed  ETA {}", bar, done, total,
                     duration_text(elapsed_s), eta);
}

void ProgressBar::advance(std::size_t units) {
  done_ += units;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(200) && done_ < total_) return;
  } else {
    int decile = static_cast<int>(done_ * 10 / total_);
    if (decile == last_decile_) return;
    last_decile_ = decile;
  }
  last_draw_ = now;
  draw(false);
}

void ProgressBar::draw(bool final_line) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::size_t this_run = done_ - done_at_start_;
  // ETA from this run's own pace: units done by an earlier run cost nothing now.
  double eta = this_run ? elapsed / this_run * static_cast<double>(total_ - done_) : -1.0;
  std::string line = render(done_, total_, elapsed, final_line ? 0.0 : eta, 30);
  std::fprintf(stderr, tty_ ? "\rsweep %s\033[K%s" : "sweep %s%s\n", line.c_str(),
               tty_ && final_line ? "\n" : "");
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_) return;
  if (tty_) draw(true);
  enabled_ = false;
}

}  // namespace fusim::sweep
