// calibrate's model context phase (backend/model_context_probe.h): the points it fits, and
// what `calibrate --points` gets of them, checked against the same trace simulated on its
// own (the simulated side is deterministic; only the measured side is real time).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>

#include "backend/model_context_probe.h"
#include "backend/switch_probe.h"
#include "exec/machine.h"

using namespace fusim;

TEST_CASE("model context points: one per op with a kernel, dt from its family's last start") {
  const workload::Trace trace = backend::switch_probe_mlp(64);  // 12 x (linear, relu), head
  const exec::Machine machine = exec::load_machine("xeon-8380-ddr4");
  const auto points = backend::context_points(trace, machine, 1);
  // The eager step's F, Bx and Bw of every linear, F and Bx of every relu and the loss's L,
  // the updates aside: 13 linears x 3 + 12 relus x 2 + 1 (the first linear has no Bx: its
  // input needs no gradient).
  CHECK(points.size() == 13 * 3 - 1 + 12 * 2 + 1);
  std::map<std::string, int> families;
  for (const auto& p : points) {
    ++families[p.family];
    CHECK(p.measured_ns > 0);
    CHECK(p.simulated_ns > 0);
  }
  CHECK(families.at("linear.F") == 13);
  CHECK(families.at("relu.Bx") == 12);
  // In the last simulated step every family ran in the step before: each dt is set, and
  // the second relu F starts after the first within one layer's time (two linear-relu
  // layers of 64 wide at batch 8: well under a millisecond).
  for (const auto& p : points) CHECK(p.since_us > 0);

  // calibrate's phase with --points: every op a row, fitted_ns its simulated time plus the
  // fitted term at its dt, cost_ns its measured time at factor 1 (a constant speed probe).
  std::vector<double> speed;
  std::string how;
  std::vector<backend::ProbePoint> rows;
  const auto term = backend::calibrate_model_context(
      {trace}, machine, 1, [] { return 100.0; }, 100.0, speed, how, &rows);
  REQUIRE(rows.size() == points.size());
  CHECK(speed.size() == 2);  // before and after the reference's run
  std::map<std::string, const backend::ContextPoint*> simulated;
  for (const auto& p : points) simulated[trace.model + " " + p.op] = &p;
  for (const auto& r : rows) {
    CHECK(r.family.rfind("model_context.", 0) == 0);
    REQUIRE(simulated.count(r.probe) == 1);
    const backend::ContextPoint& p = *simulated.at(r.probe);
    CHECK(r.since_us == p.since_us);
    CHECK(r.speed_factor == 1.0);
    CHECK(r.cost_ns == r.measured_ns);
    CHECK(r.used == (p.simulated_ns < 150e3));
    const Tick since = Tick(r.since_us * 1e3 * double(kTicksPerNs));
    CHECK(r.fitted_ns ==
          Approx(p.simulated_ns + double(term.extra(since)) / double(kTicksPerNs)).epsilon(1e-9));
  }
  CHECK(how.find("over the " + std::to_string(rows.size()) + " ops simulated under 150 us") !=
        std::string::npos);
}
