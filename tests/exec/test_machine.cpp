// Machine models: every bundled preset loads, overrides reach one field, bad input names
// the file, the JSON path and the expectation.
#include <catch2/catch.hpp>

#include "builders/hierarchy_builder.h"
#include "builders/machine_builder.h"
#include "core/error.h"
#include "core/time.h"
#include "exec/machine.h"

using namespace fusim;
using exec::load_machine;
using exec::parse_machine;

namespace {
// Two cores (so that threads_per_op has a limit to break), a DDR4-3200 channel.
nlohmann::json tiny_cpu() {
  return test::defaults::tiny_cpu().cores(2).dram("ddr4-3200", 1).json();
}

std::string error_of(const nlohmann::json& doc, std::vector<exec::Override> o = {}) {
  try {
    parse_machine(doc, "m.json", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("every bundled machine preset loads") {
  auto names = exec::machine_presets();
  REQUIRE(names.size() >= 7);
  for (const auto& name : names) {
    INFO(name);
    auto m = load_machine(name);
    CHECK(m.name == name);
    CHECK(m.compute.units > 0);
    CHECK(m.last_level_bytes() > 0);
  }
}

TEST_CASE("GPU preset numbers reproduce the datasheet peaks") {
  auto h100 = load_machine("h100-sxm5");
  CHECK(h100.kind == compute::UnitKind::Gpu);
  CHECK(h100.compute.units == 132);
  // 132 SMs x 4096 FLOP/clk x 1.83 GHz = 989.4 dense BF16 TFLOPS (whitepaper).
  double bf16 = h100.compute.matrix.bfloat16 * h100.compute.units * h100.compute.clock_mhz * 1e6;
  CHECK(bf16 == Approx(989.4e12).epsilon(0.001));
  CHECK(h100.last_level_bytes() == 50 * 1024 * 1024);
  CHECK(h100.compute.blocking_bytes == 256 * 1024);  // the private L1/shared memory
  auto a100 = load_machine("a100-sxm4-80gb");
  double tf32 = a100.compute.matrix.float32 * 108 * 1410e6;
  CHECK(tf32 == Approx(156e12).epsilon(0.01));
  auto cpu = load_machine("xeon-8380-ddr4");
  CHECK(cpu.last_level_bytes() == 60 * 1024 * 1024);
  CHECK(cpu.compute.blocking_bytes == 1280 * 1024);  // private L2
}

TEST_CASE("overrides set one field by dotted path, cache levels by name") {
  auto m = parse_machine(tiny_cpu(), "m.json",
                         {{"caches.LLC.size", "32MiB"},
                          {"dram.channels", "4"},
                          {"dram.scheduler", "fcfs"},
                          {"compute.threads_per_op", "2"}});
  CHECK(m.last_level_bytes() == 32 * 1024 * 1024);
  const auto& dram = std::get<dram::DramSpec>(m.memory);
  CHECK(dram.org.channels == 4);
  CHECK(dram.ctrl.scheduler == "fcfs");
  CHECK(m.compute.threads_per_op == 2);
  CHECK(m.compute.max_concurrent_kernels == 1);
  auto z = parse_machine(tiny_cpu(), "m.json", {{"caches.LLC.size", "0"}});
  CHECK(z.last_level_bytes() == 0);
}

TEST_CASE("bad machines and overrides are InputErrors naming file and path") {
  CHECK_THAT(error_of(tiny_cpu(), {{"caches.L3.size", "1MiB"}}),
             Catch::Contains("m.json: caches.L3.size") && Catch::Contains("\"L3\""));
  CHECK_THAT(error_of(tiny_cpu(), {{"compute.efficiency.gemm", "1.5"}}),
             Catch::Contains("compute.efficiency.gemm: expected a fraction of peak in (0, 1]"));
  CHECK_THAT(error_of(tiny_cpu(), {{"compute.threads_per_op", "3"}}),
             Catch::Contains("compute.threads_per_op: expected at most the 2 cores"));
  CHECK_THAT(error_of(tiny_cpu(), {{"compute.smz", "3"}}), Catch::Contains("smz"));
  CHECK_THAT(error_of(tiny_cpu(), {{"kind", "tpu"}}),
             Catch::Contains("kind: expected \"cpu\" or \"gpu\", got \"tpu\""));
  CHECK_THAT(error_of(tiny_cpu(), {{"caches.levels", "[]"}, {"dram.preset", "\"\""}}),
             Catch::Contains("dram.preset"));
  auto gpu_named_llc = tiny_cpu();
  gpu_named_llc["kind"] = "gpu";
  CHECK_THAT(error_of(gpu_named_llc), Catch::Contains("compute"));
  auto private_last = tiny_cpu();
  private_last["caches"]["levels"][1]["shared"] = false;
  CHECK_THAT(error_of(private_last),
             Catch::Contains("caches.levels[1].name: expected the last level to be the shared "
                             "\"LLC\" on a cpu machine"));
  CHECK_THROWS_WITH(
      load_machine("no-such-machine"),
      Catch::Contains("unknown machine \"no-such-machine\"") && Catch::Contains("h100-sxm5"));
  CHECK_THROWS_WITH(load_machine("/nonexistent/m.json"), Catch::Contains("/nonexistent/m.json"));
}

TEST_CASE("a machine is typed config: caches, a DRAM spec or a fixed memory, read at load") {
  auto m = parse_machine(tiny_cpu(), "m.json");
  const auto& spec = std::get<dram::DramSpec>(m.memory);
  CHECK(spec.standard == "DDR4");
  CHECK(spec.data_rate_mts == 3200);
  CHECK(spec.org.channels == 1);
  REQUIRE(m.caches.levels.size() == 2);
  CHECK(m.caches.levels[1].name == "LLC");
  CHECK(m.caches.levels[1].size_bytes == 4096);
  CHECK(m.caches.file == "m.json");
  // A level of size 0 is left out of the hierarchy, not out of the levels as written.
  auto z = parse_machine(tiny_cpu(), "m.json", {{"caches.LLC.size", "0"}});
  CHECK(z.caches.levels.size() == 1);
  CHECK(z.cache_levels.size() == 2);
  auto fixed = tiny_cpu();
  fixed["dram"] = {{"preset", "fixed"}, {"latency_ns", 50}, {"bandwidth_gbps", 100}};
  const auto f = std::get<exec::FixedLatency>(parse_machine(fixed, "m.json").memory);
  CHECK(f.latency == ns(50));
  CHECK(f.bandwidth_gbps == 100);
  fixed["dram"]["channels"] = 2;
  CHECK_THAT(error_of(fixed), Catch::Contains("m.json: dram.channels: expected one of the known"));
}

TEST_CASE("compute.memory_overlap: one name or a name per op class, else refused") {
  using compute::MemoryOverlap;
  using compute::OpClass;
  auto doc = tiny_cpu();
  auto overlap = [&](OpClass c) { return parse_machine(doc, "m.json").compute.overlap_of(c); };
  CHECK(overlap(OpClass::Gemm) == MemoryOverlap::DoubleBuffered);
  doc["compute"]["memory_overlap"] = "serial";
  CHECK(overlap(OpClass::Gemm) == MemoryOverlap::Serial);
  CHECK(overlap(OpClass::Pool) == MemoryOverlap::Serial);
  doc["compute"]["memory_overlap"] = "serial-reads";
  CHECK(overlap(OpClass::Elementwise) == MemoryOverlap::SerialReads);
  doc["compute"]["memory_overlap"] = {{"gemm", "serial-reads"}, {"conv", "serial"}};
  CHECK(overlap(OpClass::Gemm) == MemoryOverlap::SerialReads);
  CHECK(overlap(OpClass::Conv) == MemoryOverlap::Serial);
  CHECK(overlap(OpClass::Norm) == MemoryOverlap::DoubleBuffered);  // not named, no default
  doc["compute"]["memory_overlap"]["default"] = "serial";
  CHECK(overlap(OpClass::Norm) == MemoryOverlap::Serial);
  CHECK(overlap(OpClass::Gemm) == MemoryOverlap::SerialReads);  // the class wins
  doc["compute"]["memory_overlap"] = "overlapped";
  CHECK_THAT(error_of(doc), Catch::Contains("m.json: compute.memory_overlap: expected "
                                            "\"double-buffered\", \"serial\" or "
                                            "\"serial-reads\", got \"overlapped\""));
  doc["compute"]["memory_overlap"] = {{"gemm", "serial"}, {"matmul", "serial"}};
  CHECK_THAT(error_of(doc), Catch::Contains("m.json: compute.memory_overlap.matmul: expected "
                                            "\"default\" or one of the op classes"));
  doc["compute"]["memory_overlap"] = {{"gemm", 1}};
  CHECK_THAT(error_of(doc),
             Catch::Contains("m.json: compute.memory_overlap.gemm: expected a string, got 1"));
}

TEST_CASE("host: the DRAM probe calibrate measured, read and checked") {
  auto doc = tiny_cpu();
  CHECK(parse_machine(doc, "m.json").host.dram_triad_gbs == 0);  // presets: not measured
  doc["host"] = {{"dram_triad_gbs", 37.5}, {"threads", 2}, {"dram_triad_samples", {36, 37.5, 41}}};
  const auto m = parse_machine(doc, "m.json");
  CHECK(m.host.dram_triad_gbs == 37.5);
  CHECK(m.host.threads == 2);
  auto bad = doc;
  bad["host"]["dram_triad_gbs"] = -1;
  CHECK_THAT(error_of(bad), Catch::Contains("m.json: host.dram_triad_gbs: expected a number in"));
  bad = doc;
  bad["host"]["threads"] = 0;
  CHECK_THAT(error_of(bad),
             Catch::Contains("m.json: host.threads: expected a positive integer, got 0"));
  bad = doc;
  bad["host"]["dram_triad_samples"] = {36, "fast"};
  CHECK_THAT(error_of(bad),
             Catch::Contains("m.json: host.dram_triad_samples[1]: expected a number"));
  bad = doc;
  bad["host"]["dram_gbs"] = 3;
  CHECK_THAT(error_of(bad), Catch::Contains("m.json: host") && Catch::Contains("dram_gbs"));
  // The op speed probe: optional (files calibrated before it lack it), then checked.
  CHECK(m.host.op_probe_us == 0);
  auto timed = doc;
  timed["host"]["op_probe_us"] = 770.5;
  timed["host"]["op_probe_samples"] = {770.5, 768, 790};
  CHECK(parse_machine(timed, "m.json").host.op_probe_us == 770.5);
  bad = timed;
  bad["host"]["op_probe_us"] = 0;
  CHECK_THAT(error_of(bad), Catch::Contains("m.json: host.op_probe_us: expected a number in"));
  bad = timed;
  bad["host"]["op_probe_samples"] = {770.5, -1};
  CHECK_THAT(error_of(bad), Catch::Contains("m.json: host.op_probe_samples[1]: expected a number"));
  // The core-to-core probe: optional too (one-thread calibrations and older files).
  CHECK(m.host.core_to_core_ns == 0);
  auto placed = doc;
  placed["host"]["core_to_core_ns"] = 13.5;
  placed["host"]["core_to_core_samples"] = {13.5, 12.9, 66};
  CHECK(parse_machine(placed, "m.json").host.core_to_core_ns == 13.5);
  bad = placed;
  bad["host"]["core_to_core_ns"] = 0;
  CHECK(error_of(bad) ==
        "m.json: host.core_to_core_ns: expected a number in [0.001, 1000000], got 0");
  bad = placed;
  bad["host"]["core_to_core_samples"] = {13.5, "near"};
  CHECK_THAT(error_of(bad),
             Catch::Contains("m.json: host.core_to_core_samples[1]: expected a number"));
}

TEST_CASE("what the DRAM system would refuse is refused when the machine is read") {
  CHECK_THAT(error_of(tiny_cpu(), {{"dram.scheduler", "fifo"}}),
             Catch::Contains("m.json: scheduler: expected one of \"fcfs\"") &&
                 Catch::Contains("got \"fifo\""));
  CHECK_THAT(error_of(tiny_cpu(), {{"dram.mapping", "RoBaCo"}}),
             Catch::Contains("m.json: mapping") && Catch::Contains("Ch"));
}

TEST_CASE("the tests' named defaults say what they claim") {
  // defaults::h100_l2() is the L2 of the h100-sxm5 preset.
  const auto l2 = test::HierarchyBuilder{}.level(test::defaults::h100_l2()).build().levels[0];
  const auto preset = load_machine("h100-sxm5").caches.levels.back();
  CHECK(l2.name == preset.name);
  CHECK(l2.size_bytes == preset.size_bytes);
  CHECK(l2.assoc == preset.assoc);
  CHECK(l2.line_bytes == preset.line_bytes);
  CHECK(l2.latency_cycles == preset.latency_cycles);
  CHECK(l2.mshrs == preset.mshrs);
  CHECK(l2.shared == preset.shared);
  // defaults::tiny_cpu(): 1 core of 2 GFLOP/s, L1 1 KiB, LLC 4 KiB, a 10 ns ideal memory.
  const auto m = test::defaults::tiny_cpu().build();
  CHECK(m.compute.units == 1);
  CHECK(m.compute.flops_per_second(compute::OpClass::Gemm, workload::DType::Float32, 1) ==
        Approx(2e9));
  CHECK(m.caches.levels[0].size_bytes == 1024);
  CHECK(m.caches.levels[1].size_bytes == 4096);
  CHECK(std::get<exec::FixedLatency>(m.memory).latency == ns(10));
  CHECK(std::get<exec::FixedLatency>(m.memory).bandwidth_gbps == 0);
}

TEST_CASE("the executor's default chunk: what every core's MSHRs hold, at least 1 MiB") {
  // cores x the fewest MSHRs a core has at any level (a shared level's split over the
  // cores) x the first level's line, down to a power of two; 1 MiB at least.
  // H100: 132 x min(256, 33792 / 132 = 256) x 128 B = 4,325,376 B -> 4 MiB.
  CHECK(load_machine("h100-sxm5").default_chunk_bytes() == 4 << 20);
  // A100: 108 x min(192, 20736 / 108 = 192) x 128 B = 2,654,208 B -> 2 MiB.
  CHECK(load_machine("a100-sxm4-80gb").default_chunk_bytes() == 2 << 20);
  // H200: 132 x 320 x 128 B = 5,406,720 B -> 4 MiB; V100: 80 x 96 x 128 B = 983,040 B.
  CHECK(load_machine("h200").default_chunk_bytes() == 4 << 20);
  CHECK(load_machine("v100-sxm2").default_chunk_bytes() == 1 << 20);
  // Xeon 8380: 40 x 12 (the L1's fill buffers) x 64 B = 30,720 B: the 1 MiB floor.
  CHECK(load_machine("xeon-8380-ddr4").default_chunk_bytes() == 1 << 20);
  // More MSHRs at L1 alone change nothing (L2's share per SM is still 256); at both
  // levels: 132 x 512 x 128 B = 8,650,752 B -> 8 MiB.
  CHECK(load_machine("h100-sxm5", {{"caches.L1.mshrs", "512"}}).default_chunk_bytes() == 4 << 20);
  CHECK(load_machine("h100-sxm5", {{"caches.L1.mshrs", "512"}, {"caches.L2.mshrs", "67584"}})
            .default_chunk_bytes() == 8 << 20);
}
