#pragma once
// Simulated time is an integer count of picoseconds; never a double in the event queue.
#include <cstdint>

namespace fusim {

using Tick = std::int64_t;  // picoseconds

constexpr Tick kTicksPerNs = 1000;
constexpr Tick kTicksPerUs = 1000 * kTicksPerNs;
constexpr Tick kTicksPerMs = 1000 * kTicksPerUs;
constexpr Tick kTicksPerS = 1000 * kTicksPerMs;
constexpr Tick kNever = INT64_MAX;

constexpr Tick ps(std::int64_t v) { return v; }
constexpr Tick ns(double v) { return static_cast<Tick>(v * kTicksPerNs + (v >= 0 ? 0.5 : -0.5)); }
constexpr Tick us(double v) { return static_cast<Tick>(v * kTicksPerUs + (v >= 0 ? 0.5 : -0.5)); }
constexpr double to_ns(Tick t) { return static_cast<double>(t) / kTicksPerNs; }
constexpr double to_us(Tick t) { return static_cast<double>(t) / kTicksPerUs; }
constexpr double to_ms(Tick t) { return static_cast<double>(t) / kTicksPerMs; }
constexpr double to_seconds(Tick t) { return static_cast<double>(t) / kTicksPerS; }

// A clock domain: converts between its cycles and picoseconds explicitly.
class Clock {
 public:
  constexpr explicit Clock(Tick period_ps) : period_(period_ps) {}
  static constexpr Clock from_mhz(double mhz) { return Clock(static_cast<Tick>(1e6 / mhz + 0.5)); }
  constexpr Tick period() const { return period_; }
  constexpr Tick cycles(std::int64_t n) const { return n * period_; }
  // Cycle count that has fully elapsed at time t.
  constexpr std::int64_t cycle_at(Tick t) const { return t / period_; }
  // First clock edge at or after t.
  constexpr Tick next_edge(Tick t) const { return ((t + period_ - 1) / period_) * period_; }

 private:
  Tick period_;
};

}  // namespace fusim
