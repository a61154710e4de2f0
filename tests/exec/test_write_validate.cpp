// GPU caches are write-validate: a store covering a whole line allocates it without reading
// DRAM (sectored lines with byte masks); CPUs read the line for ownership first. Counts and
// times worked out by hand on a 2-level hierarchy (64 B lines, 1 GHz, 1-cycle lookups).
#include <catch2/catch.hpp>

#include "builders/hierarchy_builder.h"
#include "exec/machine.h"
#include "mem/cache/fixed_memory.h"
#include "mem/cache/hierarchy.h"
#include "mem/residency/residency.h"
#include "mem/residency/tensor_memory.h"

using namespace fusim;

namespace {
cache::HierarchyConfig two_levels(bool write_validate, bool l1_write_through = false) {
  auto l1 = test::defaults::one_cycle_l1().size("16KiB").write_validate(write_validate);
  if (l1_write_through) l1.write_through();
  return test::HierarchyBuilder{}
      .clock("1GHz")
      .block(4096)
      .level(l1)
      .level(test::LevelBuilder("L2")
                 .size("64KiB")
                 .assoc(8)
                 .line(64)
                 .latency(1)
                 .shared()
                 .write_validate(write_validate))
      .build();
}

std::uint64_t memory_reads(bool write_validate, cache::Fidelity fidelity, mem::Addr addr,
                           std::uint64_t bytes) {
  cache::Hierarchy h(two_levels(write_validate), fidelity, 1);
  h.access_range(0, addr, bytes, cache::AccessKind::Write);
  return h.stats().memory.reads;
}
}  // namespace

TEST_CASE("a write miss covering whole lines reads nothing on a write-validate level") {
  // 1000 B from 0: lines 0..14 are whole, line 15 (960..1023) is written up to 999 only.
  CHECK(memory_reads(false, cache::Fidelity::Line, 0, 1000) == 16);  // RFO of every line
  CHECK(memory_reads(true, cache::Fidelity::Line, 0, 1000) == 1);    // only the partial one
  CHECK(memory_reads(true, cache::Fidelity::Line, 0, 1024) == 0);
  // Block fidelity (4 KiB units): 8 KiB from 512 touches units 0, 1, 2; 0 and 2 partial.
  CHECK(memory_reads(true, cache::Fidelity::Block, 512, 8192) == 2);
  CHECK(memory_reads(true, cache::Fidelity::Block, 4096, 8192) == 0);
  CHECK(memory_reads(false, cache::Fidelity::Block, 4096, 8192) == 2);

  // The lines are allocated dirty: evicting them writes them back (16 KiB L1 + 64 KiB L2
  // hold 80 KiB; flushing writes the 1024 B once).
  cache::Hierarchy h(two_levels(true), cache::Fidelity::Line, 1);
  h.access_range(0, 0, 1024, cache::AccessKind::Write);
  auto st = h.stats();
  CHECK(st.levels[0].total.misses == 16);
  CHECK(st.levels[1].total.accesses == 0);  // L1 allocated them; nothing reached L2
  h.flush();
  CHECK(h.stats().memory.write_bytes == 1024);
}

TEST_CASE("a write-validate miss completes at first-level latency, without memory") {
  // Two whole lines issue at 0 and 1 ns (one port, 1 cycle each) and complete 1 ns later.
  // Without write-validate each goes to memory: sent after the L1 and L2 lookups (2 ns),
  // answered 100 ns later: the second completes at 1 + 2 + 100 = 103 ns.
  for (bool validate : {true, false}) {
    EventQueue queue;
    mem::FixedLatencyMemory memory(queue, ns(100), 0);
    cache::Hierarchy h(two_levels(validate), cache::Fidelity::Line, 1);
    h.attach_memory(queue, memory);
    Tick finish = -1;
    h.start_range(0, 0, 128, cache::AccessKind::Write, [&](Tick t) { finish = t; });
    queue.run();
    INFO("write_validate " << validate);
    CHECK(finish == (validate ? ns(2) : ns(103)));
    CHECK(memory.stats().reads == (validate ? 0u : 2u));
  }
}

TEST_CASE("GPU machines get write-validate caches unless a level says otherwise") {
  auto gpu = exec::load_machine("a100-sxm4-80gb", {}).caches;
  for (const auto& level : gpu.levels) CHECK(level.write_validate);
  auto cpu = exec::load_machine("xeon-8380-ddr4", {}).caches;
  for (const auto& level : cpu.levels) CHECK_FALSE(level.write_validate);
  auto off = exec::load_machine("a100-sxm4-80gb", {{"caches.L2.write_validate", "false"}}).caches;
  CHECK(off.levels[0].write_validate);
  CHECK_FALSE(off.levels[1].write_validate);
}

TEST_CASE("GPU machines get a write-through L1 unless it says otherwise") {
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5", "h200", "v100-sxm2"}) {
    INFO(name);
    auto gpu = exec::load_machine(name, {}).caches;
    CHECK(gpu.levels[0].write_policy == cache::WritePolicy::WriteThrough);
    CHECK(gpu.levels.back().write_policy == cache::WritePolicy::WriteBack);
  }
  auto cpu = exec::load_machine("xeon-8380-ddr4", {}).caches;
  for (const auto& level : cpu.levels) CHECK(level.write_policy == cache::WritePolicy::WriteBack);
  auto back = exec::load_machine("h100-sxm5", {{"caches.L1.write_policy", "write-back"}}).caches;
  CHECK(back.levels[0].write_policy == cache::WritePolicy::WriteBack);
}

TEST_CASE("a write-validate store evicted from a write-through L1 stays in L2, not DRAM") {
  // 1024 B stored (16 whole lines, nothing read), then 16 KiB read from elsewhere: the read
  // evicts all 16 lines from the 16 KiB L1. Write-back L1: they were allocated there only,
  // so the dirty victims find no copy in L2 and go to memory (1024 B). Write-through L1:
  // each store went on to L2, which allocated it dirty (write-validate), so the victims are
  // clean and memory sees nothing written until L2 lets the lines go. Line and tensor
  // fidelity alike.
  for (bool through : {false, true}) {
    INFO("L1 write-through " << through);
    const std::uint64_t expected = through ? 0 : 1024;
    cache::Hierarchy line(two_levels(true, through), cache::Fidelity::Line, 1);
    line.access_range(0, 0, 1024, cache::AccessKind::Write);
    line.access_range(0, 1 << 20, 16 << 10, cache::AccessKind::Read);
    CHECK(line.stats().memory.write_bytes == expected);
    CHECK(line.stats().levels[1].total.accesses == (through ? 16u : 0u) + 256u);

    residency::ResidencyHierarchy tensor(two_levels(true, through), {1});
    residency::Served served;
    tensor.access({0, {}, 0, 1024, true}, served);
    tensor.access({0, {}, 1 << 20, 16 << 10, false}, served);
    CHECK(served.writeback_bytes == expected);
    CHECK(served.memory_read_bytes == 16u << 10);
  }
}

TEST_CASE("a store through a write-through L1 is done at L1 latency in line and tensor fidelity") {
  // 1024 B stored from 0: 16 whole lines, write-validate everywhere, so nothing is read.
  // L1: one port, 1-cycle lookups at 1 GHz, write-through; L2 (shared, one port) 40
  // cycles. The line model's transfer finishes at the level that served its last unit,
  // L1, where the store landed; the write passed on to L2 is posted, nobody waits for it.
  // Line: the 16th line issues at 15 ns and is done 1 ns later. Tensor: 16 units of L1
  // port (16 ns, the L2 port's 16 lookups beside them) and the L1 hit latency, 1 ns; it
  // waited the L2's 40 ns more while the tail went to the deepest level looked up.
  auto config =
      test::HierarchyBuilder{}
          .clock("1GHz")
          .level(test::defaults::one_cycle_l1().size("16KiB").write_validate().write_through())
          .level(test::LevelBuilder("L2")
                     .size("64KiB")
                     .assoc(8)
                     .line(64)
                     .latency(40)
                     .shared()
                     .write_validate())
          .build();
  EventQueue line_queue;
  mem::FixedLatencyMemory memory(line_queue, ns(100), 0);
  cache::Hierarchy line(config, cache::Fidelity::Line, 1);
  line.attach_memory(line_queue, memory);
  Tick line_finish = -1;
  line.start_range(0, 0, 1024, cache::AccessKind::Write, [&](Tick t) { line_finish = t; });
  line_queue.run();
  CHECK(line_finish == ns(16));
  CHECK(memory.stats().reads + memory.stats().writes == 0u);

  EventQueue queue;
  residency::FixedMemoryCurve curve(ns(100), 1e12);
  residency::TensorMemory tensor(queue, config, {1}, curve);
  Tick tensor_finish = -1;
  const residency::Served s = tensor.issue(0, tensor.group_of({0}), 1, {{0, 1024, true}},
                                           [&](Tick t) { tensor_finish = t; });
  queue.run();
  CHECK(s.lookups[1] == 16u);  // the L2 took every store (its port time)
  CHECK(s.served[0] == 16u);   // served where it landed
  CHECK(tensor_finish == ns(17));
}
