// `fusim simulate` and `fusim sweep` with a parallel plan (issue 19): the timed multi-device
// step through the real binary: its report per ordering and stage, the Perfetto timeline's
// device and link tracks, and bad plans refused up front with one line and exit code 2.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "reliability/run_fusim.h"

using namespace fusim::test;
using nlohmann::json;

namespace {
// A 4-block Llama of one sequence of 64 tokens (bfloat16).
std::string small_llama(const std::string& dir) {
  FusimRun gen = run_fusim(dir,
                           "trace gen llama --layers 4 --hidden 256 --heads 8 --kv-heads 2 --ffn "
                           "512 --vocab 1024 --seq 64 --batch 1 -o llama.json");
  REQUIRE(gen.exit_code == 0);
  return dir + "/llama.json";
}
}  // namespace

TEST_CASE("simulate with a plan: step, per stage busy / bubble / exposed communication") {
  const std::string dir = scratch_dir("cli-plan-simulate");
  const std::string trace = small_llama(dir);
  FusimRun r = run_fusim(dir, "simulate --trace " + trace +
                                  " --tp 2 --pp 2 --dp 2 --global-batch 8 --cluster dgx-h100 "
                                  "--json --timeline tl.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("cluster") == "dgx-h100");
  CHECK(doc.at("fidelity") == "tensor");  // the plan's default
  CHECK(doc.at("microbatches") == 4);     // 8 / (1 x 2)
  REQUIRE(doc.at("results").size() == 3);
  CHECK(doc["results"][0]["ordering"] == "eager");
  CHECK(doc["results"][0]["speedup_vs_eager"] == 1.0);
  for (const auto& res : doc["results"]) {
    const double step = res.at("step_time_ms").get<double>();
    CHECK(step > 0);
    REQUIRE(res.at("stages").size() == 2);
    for (const auto& st : res["stages"]) {
      const double sum = st.at("busy_ms").get<double>() + st.at("bubble_ms").get<double>() +
                         st.at("exposed_communication_ms").get<double>();
      // A stage's steady-state step is split exactly; the step is the longest one.
      CHECK(sum <= step * (1 + 1e-12));
      CHECK(st.at("busy_ms").get<double>() > 0);
      CHECK(st.at("exposed_communication_ms").get<double>() > 0);  // TP all-reduces at least
      CHECK(st.at("peak_memory_bytes").get<std::int64_t>() > 0);
      CHECK(st.at("weight_versions") == 1);
      CHECK(st.at("gradient_delay_steps") == 0);
    }
  }
  // The timeline: one process per ordering, a track per stage's device and per link.
  const json tl = json::parse(read_file(dir + "/tl.json"));
  std::set<std::string> tracks;
  for (const auto& e : tl.at("traceEvents"))
    if (e.at("name") == "thread_name" && e.at("pid") == 1)
      tracks.insert(e.at("args").at("name").get<std::string>());
  CHECK(tracks.count("GPU 0 (stage 0)") == 1);
  CHECK(tracks.count("GPU 4 (stage 1)") == 1);    // Megatron's ranks: tp fastest, then dp, pp
  CHECK(tracks.count("GPU 0 switch port") == 1);  // 8 GPUs: one node, all on NVLink
}

TEST_CASE("simulate with a plan: orderings run at once give each ordering's own step") {
  // The single-device runs of --ordering all run concurrently; each result is the one its
  // ordering gives alone.
  const std::string dir = scratch_dir("cli-plan-orderings");
  const std::string trace = small_llama(dir);
  const std::string plan = "simulate --trace " + trace +
                           " --tp 2 --pp 2 --global-batch 4 --pipeline-schedule zb-v "
                           "--cluster dgx-h100 --json --ordering ";
  FusimRun all = run_fusim(dir, plan + "all");
  INFO(all.err);
  REQUIRE(all.exit_code == 0);
  const json results = json::parse(all.out).at("results");
  REQUIRE(results.size() == 3);
  for (const auto& res : results) {
    FusimRun one = run_fusim(dir, plan + res.at("ordering").get<std::string>());
    REQUIRE(one.exit_code == 0);
    const json alone = json::parse(one.out).at("results");
    CHECK(alone.back().at("ordering") == res.at("ordering"));
    CHECK(alone.back().at("step_time_ms").get<double>() == res.at("step_time_ms").get<double>());
  }
}

TEST_CASE("plans are refused up front: one line, exit code 2") {
  const std::string dir = scratch_dir("cli-plan-refused");
  const std::string trace = small_llama(dir);
  const std::string sim = "simulate --trace " + trace + " --cluster dgx-h100";
  for (const std::string& args : {sim + " --tp 3",                   // 8 heads
                                  sim + " --pp 3",                   // 4 blocks
                                  sim + " --dp 2 --global-batch 3",  // not a multiple of b x dp
                                  "simulate --trace " + trace + " --tp 2"}) {  // no --cluster
    FusimRun r = run_fusim(dir, args);
    INFO(args << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("fusim: --", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  FusimRun machine = run_fusim(dir, sim + " --tp 2 --machine h100-sxm5");
  CHECK(machine.exit_code == 2);
  CHECK(machine.err.rfind("fusim: --machine: expected none with a parallel plan", 0) == 0);
}

TEST_CASE("sweep over parallel.tp: one multi-device step per point, bad points before work") {
  const std::string dir = scratch_dir("cli-plan-sweep");
  const std::string trace = small_llama(dir);
  const std::string sweep = "sweep --trace " + trace +
                            " --machine h100-sxm5 --cluster dgx-h100 --pp 2 --global-batch 4 "
                            "--fidelity tensor --ordering eager --optimizer adam --quiet --json";
  FusimRun ok = run_fusim(dir, sweep + " --set parallel.tp=1,2");
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  const json rows = json::parse(ok.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("parallel.tp") == 1);
  CHECK(rows[1].at("parallel.tp") == 2);
  // Each point is the step `fusim simulate` times for its plan: the points share one
  // single-device run (their layer times do not depend on parallel.*), which changes nothing.
  for (const auto& row : rows) {
    const int tp = row.at("parallel.tp").get<int>();
    FusimRun one = run_fusim(dir, "simulate --trace " + trace + " --tp " + std::to_string(tp) +
                                      " --pp 2 --global-batch 4 --cluster dgx-h100 --ordering "
                                      "eager --optimizer adam --json");
    INFO(one.err);
    REQUIRE(one.exit_code == 0);
    const double step = json::parse(one.out).at("results")[0].at("step_time_ms").get<double>();
    CHECK(row.at("step_time_ms").get<double>() == Approx(step).epsilon(1e-12));
  }
  FusimRun bad = run_fusim(dir, sweep + " --set parallel.tp=1,3");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("grid point parallel.tp=3: --tp:") != std::string::npos);
  CHECK(bad.err.find('\n') == bad.err.size() - 1);
}
