#include "core/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace fusim {
namespace {

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Progress::Progress(std::string label, std::size_t total, std::size_t already_done, bool enabled,
                   std::string unit, double delay_s)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      done_(already_done),
      done_at_start_(already_done),
      enabled_(enabled && total > already_done),
      tty_(isatty(STDERR_FILENO) == 1),
      delay_s_(delay_s),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (enabled_ && already_done > 0)
    std::fprintf(stderr, "%s: resuming, %zu of %zu %s already done\n", label_.c_str(), already_done,
                 total, unit_.c_str());
}

std::string Progress::render(std::size_t done, std::size_t total, double elapsed_s, double eta_s,
                             int width, const std::string& unit, double rate) {
  int filled = total ? static_cast<int>(static_cast<double>(done) / total * width) : width;
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
  const std::string eta = eta_s < 0 ? "--" : duration_text(eta_s);
  if (unit == "%")
    return fmt::format("[{}] {:3.0f}%  {} elapsed  ETA {}", bar,
                       total ? 100.0 * static_cast<double>(done) / total : 100.0,
                       duration_text(elapsed_s), eta);
  const std::string speed = rate < 0 ? "" : fmt::format("  {:.3g} {}/s", rate, unit);
  return fmt::format("[{}] {}/{} {}{}  {} elapsed  ETA {}", bar, done, total, unit, speed,
                     duration_text(elapsed_s), eta);
}

void Progress::advance(std::size_t units) {
  done_ = std::min(total_, done_ + units);
  update();
}

void Progress::set_fraction(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  done_ = std::max(done_, static_cast<std::size_t>(f * static_cast<double>(total_)));
  update();
}

void Progress::update() {
  if (!enabled_) return;
  if (seconds_since(start_) < delay_s_ && done_ < total_) return;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (shown_ && now - last_draw_ < std::chrono::milliseconds(200) && done_ < total_) return;
  } else {
    const int decile = static_cast<int>(done_ * 10 / total_);
    if (decile == last_decile_) return;
    last_decile_ = decile;
  }
  if (!shown_ && done_ >= total_ && seconds_since(start_) < delay_s_) return;
  last_draw_ = now;
  draw(false);
}

void Progress::draw(bool final_line) {
  const double elapsed = seconds_since(start_);
  const std::size_t this_run = done_ - done_at_start_;
  // ETA and rate from this run's own pace: units done by an earlier run cost nothing now.
  const double eta = this_run ? elapsed / this_run * static_cast<double>(total_ - done_) : -1.0;
  const double rate = elapsed > 0 && this_run ? static_cast<double>(this_run) / elapsed : -1.0;
  const std::string line = render(done_, total_, elapsed, final_line ? 0.0 : eta, 30, unit_, rate);
  std::fprintf(stderr, tty_ ? "\r%s %s\033[K%s" : "%s %s%s\n", label_.c_str(), line.c_str(),
               tty_ && final_line ? "\n" : "");
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (!enabled_) return;
  if (tty_ && shown_) draw(true);
  enabled_ = false;
}

}  // namespace fusim
