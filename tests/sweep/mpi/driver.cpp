// Runs a fixed study on the FakeEvaluator through run_study, as `fusim sweep` does: in one
// process, or sharded when started by mpirun. Usage: sweep_mpi_driver OUT.csv|OUT.json JOBS
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "fake_evaluator.h"
#include "sweep/run_study.h"

int main(int argc, char** argv) {
  using namespace fusim::sweep;
  if (argc != 3) {
    std::fprintf(stderr, "usage: sweep_mpi_driver OUT.csv|OUT.json JOBS\n");
    return 2;
  }
  try {
    Study study(Grid({"a.json", "b.json"}, {parse_axis("caches.L2.size=1MiB,2MiB,4MiB"),
                                            parse_axis("dram.channels=1,2,4,8")}),
                {"eager", "backward-fused", "forward-fused"}, {"sgd", "adam"});
    testing::FakeEvaluator sleepy(true);  // units finish out of order on every rank
    study.check(sleepy);
    SweepSummary s = run_study(study, sleepy, {argv[1], false}, {std::atoi(argv[2]), false});
    std::fprintf(stderr, "driver: %zu rank(s)%s\n", s.ranks, s.writes_output ? ", wrote" : "");
  } catch (const fusim::InputError& e) {
    std::fprintf(stderr, "driver: %s\n", e.what());
    return 2;
  }
  return 0;
}
