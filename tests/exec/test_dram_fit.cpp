// calibrate's DRAM channel count (exec/dram_fit.h): the count whose simulated triad is
// nearest the measured one, found by walking from the document's count.
#include <catch2/catch.hpp>
#include <cmath>

#include "builders/machine_builder.h"
#include "core/time.h"
#include "exec/compute_solver.h"
#include "exec/dram_fit.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"

using namespace fusim;

namespace {
// Two cores with 64 MSHRs each (enough reads in flight to fill several DDR4 channels), a
// 256 KiB LLC, DDR4-3200 channels; 8 MiB arrays, 32 times the LLC.
constexpr std::int64_t kArray = std::int64_t{8} << 20;
nlohmann::json host(int channels) {
  return test::defaults::tiny_cpu()
      .cores(2)
      .threads_per_op(2)
      .llc("256KiB")
      .mshrs(64)
      .dram("ddr4-3200", channels)
      .json();
}
// Every count's simulated triad from 1 up to where it stops growing: the fit's trials for a
// bandwidth none reaches.
std::vector<exec::DramChannelTrial> all_counts() {
  return exec::fit_dram_channels(host(1), 1e6, kArray).trials;
}
}  // namespace

TEST_CASE("the simulated triad counts 3 arrays of a 4-array traffic") {
  const auto trials = all_counts();
  REQUIRE(trials.size() >= 6);
  for (int c = 1; c <= 6; ++c) {
    const double gbs = trials[std::size_t(c - 1)].gbs;
    INFO("channels " << c << ": " << gbs << " GB/s");
    CHECK(trials[std::size_t(c - 1)].channels == c);
    // DDR4-3200, 64 bits: 25.6 GB/s a channel. The triad's store misses read for ownership,
    // so the DRAM moves 4 arrays while 3 are counted: at most 3/4 of the peak is counted.
    CHECK(gbs < 0.75 * 25.6 * c);
  }
  // One channel is the bottleneck: above half of its counted peak.
  CHECK(trials[0].gbs > 0.5 * 0.75 * 25.6);
}

TEST_CASE("the fit takes the count whose simulated triad is nearest the measured one") {
  const auto all = all_counts();
  auto nearest = [&](double measured, std::size_t tried) {
    int best = 0;
    for (std::size_t i = 0; i < tried; ++i)
      if (std::abs(std::log(all[i].gbs / measured)) <
          std::abs(std::log(all[std::size_t(best)].gbs / measured)))
        best = int(i);
    return best + 1;
  };
  for (int c = 1; c <= 5; ++c) {
    const double at = all[std::size_t(c - 1)].gbs;
    for (double f : {0.8, 1.0, 1.15}) {
      const double measured = at * f;
      INFO("measured " << measured << " GB/s (" << f << " x " << c << " channels')");
      const auto fit = exec::fit_dram_channels(host(7), measured, kArray);
      // Tried from 1 up until two counts in a row reach the measured bandwidth, or the
      // bandwidth stops growing (the cores' MSHRs bound it: 5 and 6 channels here).
      const std::size_t n = fit.trials.size();
      REQUIRE(n >= 2);
      if (f == 1.15 && c == 5) {
        CHECK(n == 5 + exec::kSaturated);
      } else {
        CHECK(fit.trials.back().gbs >= measured);
        CHECK(fit.trials[n - 2].gbs >= measured);
      }
      for (std::size_t i = 0; i + 2 < n; ++i)
        CHECK((fit.trials[i].gbs < measured || fit.trials[i + 1].gbs < measured));
      CHECK(fit.channels == nearest(measured, n));
      CHECK(fit.channel_gbs == all[std::size_t(fit.channels - 1)].gbs);
      if (f == 1.0 && c <= 3) CHECK(fit.channels == c);  // (the model's own value)
    }
  }
}

TEST_CASE("the probe moves 4 arrays through DRAM and its bandwidth counts 3") {
  const workload::Trace trace = exec::stream_add_trace(kArray);
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  REQUIRE(s.ops.at(0).kind == schedule::OpKind::Forward);
  REQUIRE(s.ops.at(0).layer == 0);
  const auto iso = exec::isolated_schedule(s, 0, exec::kIsolationRepeats);
  const exec::Machine m = exec::parse_machine(host(2), "m.json");
  exec::SimOptions o;
  o.fidelity = exec::Fidelity::Tensor;
  o.warmup_steps = 0;
  o.op_compute.assign(iso.ops.size(), 0);
  const auto r = exec::simulate(trace, iso, m, o);
  const exec::OpTiming& timed = r.per_op.back();
  // The timed pass reads x and y, reads each line of out before writing it (write-allocate),
  // and writes back the lines of out the previous pass left dirty: 4 arrays (the 256 KiB
  // LLC keeps under 1% of them).
  CHECK(double(timed.dram_bytes) == Approx(4.0 * double(kArray)).epsilon(0.02));
  const double gbs = 3.0 * double(kArray) / to_seconds(timed.end - timed.start) / 1e9;
  const auto fit = exec::fit_dram_channels(host(2), 1e6, kArray);
  CHECK(fit.trials.at(1).channels == 2);
  CHECK(fit.trials.at(1).gbs == Approx(gbs).epsilon(1e-9));
}

TEST_CASE("then the data rate closes what whole channels leave") {
  const auto all = all_counts();
  // 8% above 2 channels' bandwidth (3 channels' is 1.8x it): the count is 2 and the rate
  // moves the simulated triad towards the measured one, from DDR4-3200's upward.
  const double measured = 1.08 * all[1].gbs;
  const auto fit = exec::fit_dram_channels(host(1), measured, kArray);
  INFO("channels " << fit.channels << ", " << fit.data_rate_mts << " MT/s: " << fit.simulated_gbs
                   << " GB/s for " << measured);
  CHECK(fit.channels == 2);
  CHECK(fit.channel_gbs == all[1].gbs);
  REQUIRE_FALSE(fit.rate_trials.empty());
  // The bandwidth is jagged in the rate (timings round to whole clocks: 3488 MT/s 25.06
  // GB/s, 3495 24.95, 3501 25.55), so within 2%, and the nearest of the rates tried.
  CHECK(std::abs(std::log(fit.simulated_gbs / measured)) < 0.02);
  for (const auto& t : fit.rate_trials)
    CHECK(std::abs(std::log(fit.simulated_gbs / measured)) <= std::abs(std::log(t.gbs / measured)));
  CHECK(fit.data_rate_mts > 3200);
  CHECK(fit.data_rate_mts < 3200 * 1.2);
  // The model's own value at a count: no rate step.
  const auto own = exec::fit_dram_channels(host(1), all[1].gbs, kArray);
  CHECK(own.channels == 2);
  CHECK(own.data_rate_mts == 3200);
  CHECK(own.rate_trials.empty());
  // Below it: a lower rate, or, where DDR4-3200's timings in clocks no longer fit its ns
  // ones at that rate (tRC < tRAS + tRP), the preset's; never an invalid machine.
  const auto low = exec::fit_dram_channels(host(1), 0.92 * all[1].gbs, kArray);
  CHECK(low.channels == 2);
  CHECK(low.data_rate_mts <= 3200);
}
