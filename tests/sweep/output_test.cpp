// Rows, their files and resuming, against the hand-checkable FakeEvaluator.
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "fake_evaluator.h"
#include "sweep/result_file.h"
#include "sweep/run_study.h"

using namespace fusim;
using namespace fusim::sweep;
using Catch::Matchers::Contains;
using fusim::sweep::testing::FakeEvaluator;

namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::path(FUSIM_BINARY_DIR) / "tests" / "sweep" / "out";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

Study l2_study(const std::string& sizes = "1MiB,4MiB") {
  return Study(Grid({"t.json"}, {parse_axis("caches.L2.size=" + sizes)}),
               {"eager", "backward-fused", "forward-fused"}, {"adam"});
}

// check() may keep what it builds in the evaluator (SimEvaluator keeps each point's machine).
template <class E>
std::string run_to(const Study& study, E&& ev, const std::string& path, int jobs,
                   bool resume = false) {
  study.check(ev);
  run_study(study, ev, {path, resume}, {jobs, false});
  return slurp(path);
}

}  // namespace

TEST_CASE("one row per point x optimizer x ordering; speedups against eager at the point") {
  // eager 12 ms; backward-fused 12 - MiB ms; forward-fused 12 - 2 MiB ms (fake_evaluator.h)
  const std::string expected =
      "trace,caches.L2.size,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,"
      "llc_hit_rate,peak_memory_bytes\n"
      "t.json,1048576,eager,adam,12,1,1000,0.5,4096\n"
      "t.json,1048576,backward-fused,adam,11,1.0909090909090908,1000,0.5,4096\n"  // 12/11
      "t.json,1048576,forward-fused,adam,10,1.2,1000,0.5,4096\n"
      "t.json,4194304,eager,adam,12,1,1000,0.8,4096\n"  // hit rate 1 - 1/5
      "t.json,4194304,backward-fused,adam,8,1.5,1000,0.8,4096\n"
      "t.json,4194304,forward-fused,adam,4,3,1000,0.8,4096\n";
  CHECK(run_to(l2_study(), FakeEvaluator{}, temp_path("rows.csv"), 1) == expected);
}

TEST_CASE("a hit_rate column per cache level, after the other results") {
  Study study(Grid({"t.json"}, {parse_axis("caches.L2.size=3MiB")}), {"eager"}, {"adam"});
  FakeEvaluator ev;
  study.set_cache_levels(ev.cache_levels());
  CHECK(run_to(study, ev, temp_path("levels.csv"), 1) ==
        "trace,caches.L2.size,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,"
        "llc_hit_rate,peak_memory_bytes,hit_rate.L1,hit_rate.L2\n"
        "t.json,3145728,eager,adam,12,1,1000,0.75,4096,0.25,0.75\n");  // 1 - 1/4
  // A level a result does not report is left empty.
  study.set_cache_levels({"L1", "L3"});
  CHECK(run_to(study, ev, temp_path("levels3.csv"), 1) ==
        "trace,caches.L2.size,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,"
        "llc_hit_rate,peak_memory_bytes,hit_rate.L1,hit_rate.L3\n"
        "t.json,3145728,eager,adam,12,1,1000,0.75,4096,0.25,\n");
}

TEST_CASE("speedup is against eager even when eager is not listed") {
  Study study(Grid({"t.json"}, {parse_axis("caches.L2.size=2MiB")}), {"forward-fused"},
              {"sgd", "adam"});
  std::string csv = run_to(study, FakeEvaluator{}, temp_path("no_eager.csv"), 1);
  CHECK(csv ==
        "trace,caches.L2.size,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,"
        "llc_hit_rate,peak_memory_bytes\n"
        "t.json,2097152,forward-fused,sgd,8,1.5,1000,0.6666666666666667,4096\n"  // 12/8; 1 - 1/3
        "t.json,2097152,forward-fused,adam,8,1.5,1000,0.6666666666666667,4096\n");
}

TEST_CASE("JSON output is an array of objects, one per line, columns in order") {
  std::string text = run_to(l2_study(), FakeEvaluator{}, temp_path("rows.json"), 1);
  CHECK(text.rfind("[\n{\"trace\":\"t.json\",\"caches.L2.size\":1048576,\"ordering\":\"eager\","
                   "\"optimizer\":\"adam\",\"step_time_ms\":12.0,",
                   0) == 0);
  CHECK(text.substr(text.size() - 3) == "\n]\n");
  auto rows = nlohmann::json::parse(text);
  REQUIRE(rows.size() == 6);
  CHECK(rows[4]["ordering"] == "backward-fused");
  CHECK(rows[4]["step_time_ms"] == 8.0);
  CHECK(rows[4]["speedup_vs_eager"] == 1.5);
  CHECK(rows[5]["speedup_vs_eager"] == 3.0);
}

TEST_CASE("output is byte-identical with 1 or 3 threads although units finish out of order") {
  Study study(Grid({"a.json", "b.json"}, {parse_axis("caches.L2.size=1MiB,2MiB,4MiB"),
                                          parse_axis("dram.channels=1,2,4")}),
              {"eager", "backward-fused", "forward-fused"}, {"sgd", "adam"});
  FakeEvaluator sleepy(true);  // low units sleep longest: a later unit finishes first
  for (const char* ext : {".csv", ".json"}) {
    std::string one = run_to(study, sleepy, temp_path(std::string("jobs1") + ext), 1);
    std::string three = run_to(study, sleepy, temp_path(std::string("jobs3") + ext), 3);
    CHECK(one == three);
  }
  // 2 traces x 3 x 3 points x 2 optimizers x 3 orderings = 108 rows + header
  std::string csv = slurp(temp_path("jobs3.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 109);
}

TEST_CASE("resume after a kill at any byte gives the bytes of an uninterrupted run") {
  Study study = l2_study("1MiB,2MiB,4MiB");
  FakeEvaluator ev;
  for (const char* ext : {".csv", ".json"}) {
    const std::string path = temp_path(std::string("resume") + ext);
    const std::string full = run_to(study, ev, path, 1);
    for (std::size_t cut = 0; cut <= full.size(); ++cut) {
      spit(path, full.substr(0, cut));  // what a kill at this byte leaves
      INFO(ext << " cut at byte " << cut);
      REQUIRE(run_to(study, ev, path, 2, true) == full);
    }
  }
}

namespace {
// Counts the units it is asked for: resuming must not recompute finished ones.
class CountingEvaluator : public FakeEvaluator {
 public:
  exec::RunResult run(const PointSetup& p, const std::string& o,
                      const std::string& opt) const override {
    ++runs;
    return FakeEvaluator::run(p, o, opt);
  }
  mutable std::atomic<int> runs{0};
};
}  // namespace

TEST_CASE("resume skips the finished units and drops a half-written one") {
  Study study = l2_study("1MiB,2MiB,4MiB");
  const std::string path = temp_path("skip.csv");
  const std::string full = run_to(study, FakeEvaluator{}, path, 1);
  // header + unit 0 (3 rows) + 2 rows of unit 1: unit 1 is redone, unit 0 kept.
  std::size_t cut = 0;
  for (int line = 0; line < 6; ++line) cut = full.find('\n', cut) + 1;
  spit(path, full.substr(0, cut));
  RowFormat format(FileFormat::Csv, study.columns());
  ResumeState state = scan_for_resume(path, format, study);
  CHECK(state.units_done == 1);
  CHECK(state.rows_done == 3);
  CountingEvaluator counting;
  SweepSummary summary = run_study(study, counting, {path, true}, {1, false});
  CHECK(summary.units_resumed == 1);
  CHECK(counting.runs == 6);  // units 1 and 2, three orderings each
  CHECK(slurp(path) == full);
}

TEST_CASE("resume refuses a file of another study, naming the line") {
  const std::string path = temp_path("other.csv");
  run_to(l2_study("1MiB,4MiB"), FakeEvaluator{}, path, 1);
  Study other = l2_study("1MiB,2MiB");  // unit 0 agrees, unit 1 does not
  RowFormat format(FileFormat::Csv, other.columns());
  CHECK_THROWS_WITH(scan_for_resume(path, format, other), Contains("other.csv: line 5") &&
                                                              Contains("caches.L2.size=2097152") &&
                                                              Contains("drop --resume"));
  Study wider(Grid({"t.json"}, {parse_axis("dram.channels=1")}), {"eager"}, {"adam"});
  CHECK_THROWS_WITH(scan_for_resume(path, RowFormat(FileFormat::Csv, wider.columns()), wider),
                    Contains("line 1") && Contains("header"));
  Study smaller = l2_study("1MiB");
  CHECK_THROWS_WITH(scan_for_resume(path, RowFormat(FileFormat::Csv, smaller.columns()), smaller),
                    Contains("line 5") && Contains("at most 3 rows"));
}

TEST_CASE("resume without an earlier file starts afresh; a finished file is kept as is") {
  Study study = l2_study();
  const std::string path = temp_path("fresh.json");
  std::filesystem::remove(path);
  const std::string full = run_to(study, FakeEvaluator{}, path, 1, true);
  CountingEvaluator counting;
  CHECK(run_to(study, counting, path, 1, true) == full);
  CHECK(counting.runs == 0);
}

TEST_CASE("output names and study options are checked") {
  CHECK_THROWS_WITH(format_for_path("results.txt"), Contains("-o") && Contains(".csv or .json"));
  Grid grid({"t.json"}, {});
  CHECK_THROWS_WITH(Study(grid, {}, {"adam"}), Contains("--ordering"));
  CHECK_THROWS_WITH(Study(grid, {"eager", "eager"}, {"adam"}), Contains("eager twice"));
  CHECK_THROWS_WITH(Study(grid, {"eager"}, {"adam", ""}), Contains("--optimizer"));
  Study bad_name(grid, {"eager", "sideways"}, {"adam"});
  FakeEvaluator fake;
  CHECK_THROWS_WITH(bad_name.check(fake), Contains("--ordering") && Contains("sideways"));
  Study bad_path(Grid({"t.json"}, {parse_axis("caches.L9.size=1MiB")}), {"eager"}, {"adam"});
  CHECK_THROWS_WITH(bad_path.check(fake), Contains("caches.L9.size"));
}
