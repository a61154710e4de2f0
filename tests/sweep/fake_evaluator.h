#pragma once
// A stand-in for the simulator with step times simple enough to work out by hand:
//   eager           12 ms
//   backward-fused  12 ms - 1 ms per MiB of caches.L2.size (default 1 MiB)
//   forward-fused   12 ms - 2 ms per MiB
// dram_bytes = 1000 * channels (default 1), llc_hit_rate = 1 - 1/(MiB+1) (its levels: L1
// always 0.25, L2 the same as llc_hit_rate), peak 4096 B per
// trace index + 1, and each run sleeps a little (longer for low units) so that threads
// finish out of order.
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "core/error.h"
#include "sweep/evaluator.h"

namespace fusim::sweep::testing {

class FakeEvaluator : public Evaluator {
 public:
  explicit FakeEvaluator(bool sleepy = false) : sleepy_(sleepy) {}

  void check_choices(const std::vector<std::string>& orderings,
                     const std::vector<std::string>&) const override {
    for (const auto& o : orderings)
      if (o != "eager" && o != "backward-fused" && o != "forward-fused")
        throw InputError("--ordering", "", "eager, backward-fused or forward-fused, got " + o);
  }

  void check_point(const PointSetup& point) override {
    for (const auto& [path, value] : point.machine_overrides)
      if (path != "caches.L2.size" && path != "dram.channels")
        throw InputError("fake-machine", path, "a field of the machine model");
      else if (!value.is_number_integer() || value.get<std::int64_t>() <= 0)
        throw InputError("fake-machine", path, "a positive integer, got " + value.dump());
  }

  std::vector<std::string> cache_levels() const override { return {"L1", "L2"}; }

  exec::RunResult run(const PointSetup& point, const std::string& ordering,
                      const std::string& optimizer) const override {
    std::int64_t mib = 1, channels = 1;
    for (const auto& [path, value] : point.machine_overrides) {
      if (path == "caches.L2.size") mib = value.get<std::int64_t>() >> 20;
      if (path == "dram.channels") channels = value.get<std::int64_t>();
    }
    if (sleepy_)  // early units (small sizes, first channel counts) take longest
      std::this_thread::sleep_for(std::chrono::milliseconds(8 / mib + 3 / channels));
    exec::RunResult r;
    r.executor = "fake";
    r.ordering = ordering;
    r.optimizer = optimizer;
    Tick ms = kTicksPerMs;
    r.step_time = ordering == "eager"            ? 12 * ms
                  : ordering == "backward-fused" ? 12 * ms - mib * ms
                                                 : 12 * ms - 2 * mib * ms;
    r.dram_bytes = 1000 * channels;
    r.llc_hit_rate = 1.0 - 1.0 / static_cast<double>(mib + 1);
    r.hit_rates = {{"L1", 0.25}, {"L2", r.llc_hit_rate}};
    r.peak_memory_bytes = 4096 * static_cast<std::int64_t>(point.trace + 1);
    return r;
  }

 private:
  bool sleepy_;
};

}  // namespace fusim::sweep::testing
