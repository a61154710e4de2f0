// Timed path: exact latencies of hits at each level and of a miss under a fixed-latency
// memory, port bandwidth, and MSHR-limited miss throughput; block writebacks and port slots
// taken piece by piece; plus the watchdog dump.
#include <catch2/catch.hpp>
#include <vector>

#include "builders/hierarchy_builder.h"
#include "core/watchdog.h"
#include "mem/cache/fixed_memory.h"
#include "mem/cache/hierarchy.h"

using namespace fusim;
using namespace fusim::cache;
using test::HierarchyBuilder;
using test::LevelBuilder;
namespace defaults = test::defaults;

namespace {
// 2 GHz (500 ps): L1 4 cycles, L2 12, L3 40 -> hits at 2, 8 and 28 ns after issue.
// L1 and L2 are one fully associative set (4 and 16 lines), L3 64 lines.
HierarchyConfig three_levels() {
  return HierarchyBuilder{}
      .clock("2GHz")
      .level(defaults::tiny_l1())
      .level(LevelBuilder("L2").size(1024).assoc(16).line(64).latency(12))
      .level(LevelBuilder("L3").size(4096).assoc(64).line(64).latency(40).shared())
      .build();
}

// One level (1 GHz unless said otherwise, 1-cycle lookups, 1 port).
HierarchyConfig one_level(const LevelBuilder& l1) {
  return HierarchyBuilder{}.level(l1).build();
}

struct Bench {
  EventQueue queue;
  mem::FixedLatencyMemory memory;
  Hierarchy h;
  Bench(const HierarchyConfig& config, Tick latency, double bytes_per_s = 0, int cores = 1)
      : memory(queue, latency, bytes_per_s), h(config, Fidelity::Line, cores) {
    h.attach_memory(queue, memory);
  }
  // Starts a range now, runs to the end, returns (finish - start).
  Tick timed(Addr addr, std::uint64_t bytes, AccessKind kind = AccessKind::Read) {
    Tick start = queue.now(), finish = -1, called_at = -1;
    h.start_range(0, addr, bytes, kind, [&](Tick f) {
      finish = f;
      called_at = queue.now();
    });
    queue.run();
    REQUIRE(finish >= 0);
    CHECK(called_at == finish);  // the callback runs at the finish time
    return finish - start;
  }
};
}  // namespace

TEST_CASE("hit latency at each level and miss latency under a fixed-latency memory") {
  Bench b(three_levels(), ns(100));
  CHECK(b.h.hit_latency(0) == 2000);
  CHECK(b.h.hit_latency(1) == 8000);
  CHECK(b.h.hit_latency(2) == 28000);
  // Cold miss: lookups in L1, L2, L3 (28 ns), then 100 ns in memory.
  CHECK(b.timed(0x0, 64) == 28000 + 100000);
  CHECK(b.timed(0x0, 64) == 2000);  // now an L1 hit
  // Push line 0 out of L1 (4 lines) but not out of L2 (16): four other lines.
  for (Addr a = 1; a <= 4; ++a) b.h.access(0, a * 64, AccessKind::Read);
  CHECK(b.timed(0x0, 64) == 8000);
  // Out of L1 and L2 but in L3 (64 lines): sixteen other lines not yet seen.
  for (Addr a = 100; a < 116; ++a) b.h.access(0, a * 64, AccessKind::Read);
  CHECK(b.timed(0x0, 64) == 28000);
  CHECK(b.memory.stats().reads == 1 + 4 + 16);
}

TEST_CASE("a stream of L1 hits is limited by the L1 ports") {
  // 1 GHz, 1-cycle L1 with 2 ports: a port takes a unit every 500 ps, so 8 hits issue at
  // 0, 0.5, ..., 3.5 ns and the last completes one cycle after its issue.
  Bench b(one_level(defaults::one_cycle_l1().size(4096).ports(2)), ns(50));
  b.h.access_range(0, 0, 512, AccessKind::Read);  // warm 8 lines
  CHECK(b.timed(0, 512) == 3500 + 1000);
}

TEST_CASE("a port narrower than a line: bytes_per_cycle sets the hits' pace") {
  // 1 GHz, 1-cycle L1 whose port passes 16 B a cycle: a 64 B line holds it 4 cycles, so 8
  // hits issue at 0, 4, ..., 28 ns and the last completes one cycle after its issue.
  Bench b(one_level(defaults::one_cycle_l1().size(4096).bytes_per_cycle(16)), ns(50));
  b.h.access_range(0, 0, 512, AccessKind::Read);  // warm 8 lines
  CHECK(b.timed(0, 512) == 28000 + 1000);
  // 128 B a cycle is two ports' worth: as "ports": 2 above.
  Bench wide(one_level(defaults::one_cycle_l1().size(4096).bytes_per_cycle(128)), ns(50));
  wide.h.access_range(0, 0, 512, AccessKind::Read);
  CHECK(wide.timed(0, 512) == 3500 + 1000);
}

TEST_CASE("MSHRs limit the throughput of a stream of misses") {
  // 1 GHz single level, 1 cycle, 1 port, memory 100 ns with unlimited bandwidth. A unit
  // issued at t is sent at t + 1 ns and back at t + 101 ns.
  auto config = [](int mshrs) { return one_level(defaults::one_cycle_l1().mshrs(mshrs)); };
  // 8 MSHRs: all 8 misses issue back to back (0..7 ns); the last is back at 7 + 101 ns.
  Bench wide(config(8), ns(100));
  CHECK(wide.timed(0, 512) == 108000);
  // 2 MSHRs: units issue in pairs, each pair when the previous pair's first miss returns:
  // (0, 1) ns, then (101, 102), (202, 203), (303, 304) -> the last is back at 405 ns.
  Bench narrow(config(2), ns(100));
  CHECK(narrow.timed(0, 512) == 405000);
  CHECK(narrow.memory.stats().reads == 8);
}

TEST_CASE("memory bandwidth limits a stream of misses once MSHRs allow it") {
  // 64 B at 6.4 GB/s = 10 ns of channel time per line; latency 20 ns after the transfer.
  // 16 MSHRs, 4 lines: sends at 1,2,3,4 ns; channel busy 1-11, 11-21, 21-31, 31-41; the
  // last line is back at 41 + 20 = 61 ns.
  Bench b(one_level(defaults::one_cycle_l1()), ns(20), 6.4e9);
  CHECK(b.memory.transfer_time(64) == 10000);
  CHECK(b.timed(0, 256) == 61000);
}

TEST_CASE("dirty writebacks are posted: they use memory but delay no range") {
  Bench b(one_level(defaults::one_cycle_l1().size(128).assoc(2)), ns(100));
  b.h.access_range(0, 0, 128, AccessKind::Write);  // two dirty lines, sync path
  b.queue.run();
  CHECK(b.memory.stats().reads == 2);  // sync-path misses are sent too
  // Reading two new lines evicts both dirty lines: 2 writebacks posted, 2 reads waited for.
  CHECK(b.timed(128, 128) == 1000 + 1000 + 100000);  // second line issues at 1 ns
  CHECK(b.memory.stats().writes == 2);
  CHECK_FALSE(b.h.busy());
}

namespace {
// Fixed-latency memory that records what reaches it: (send time, address, bytes, write).
struct Sent {
  Tick at;
  Addr addr;
  std::uint32_t bytes;
  bool is_write;
  bool operator==(const Sent& o) const {
    return at == o.at && addr == o.addr && bytes == o.bytes && is_write == o.is_write;
  }
};
class RecordingMemory final : public mem::MemoryPort {
 public:
  RecordingMemory(EventQueue& queue, Tick latency, std::uint32_t max_in_flight = 0)
      : queue_(queue), memory_(queue, latency, 0, max_in_flight) {}
  bool will_accept(const mem::MemRequest& r) const override { return memory_.will_accept(r); }
  void send(const mem::MemRequest& r) override {
    sent.push_back({queue_.now(), r.addr, r.bytes, r.is_write});
    memory_.send(r);
  }
  void set_completion(Completion c) override { memory_.set_completion(std::move(c)); }
  void set_retry(std::function<void()> retry) override { memory_.set_retry(std::move(retry)); }
  void request_retry() override { memory_.request_retry(); }
  std::vector<Sent> sent;

 private:
  EventQueue& queue_;
  mem::FixedLatencyMemory memory_;
};
}  // namespace

TEST_CASE("a block's dirty victim is written back with the pieces of the miss that evicts it") {
  // Block fidelity, 1 KiB blocks (16 lines), one 1 GHz level of one block, 1-cycle lookup,
  // 4 MSHRs (lines); memory 100 ns, unlimited bandwidth. Block 0 is dirty; reading block 1
  // evicts it. The miss goes out in 4 pieces of 4 lines: at 0 + 1 ns, and each time the
  // previous piece is back (101, 202, 303 ns) one lookup later (102, 203, 304 ns); the
  // last is back at 404 ns. Each piece's 4 lines evict 4 lines of block 0: its writeback
  // leaves as 4 x 256 B when the piece issues (0, 101, 202, 303 ns), as the line writebacks
  // of line fidelity would, not as one 1 KiB burst at 0.
  EventQueue queue;
  RecordingMemory memory(queue, ns(100));
  Hierarchy h(HierarchyBuilder{}
                  .block(1024)
                  .clock("1GHz")
                  .level(defaults::one_cycle_l1().size("1KiB").assoc(1).mshrs(4))
                  .build(),
              Fidelity::Block, 1);
  h.attach_memory(queue, memory);
  h.access_range(0, 0, 1024, AccessKind::Write);  // block 0 dirty (its fetch is sent now)
  queue.run();
  REQUIRE(memory.sent.size() == 1);
  memory.sent.clear();
  const Tick start = queue.now();
  Tick finish = -1;
  h.start_range(0, 1024, 1024, AccessKind::Read, [&](Tick f) { finish = f; });
  queue.run();
  CHECK(finish - start == ns(404));
  std::vector<Sent> want;
  for (Tick k = 0; k < 4; ++k) {
    want.push_back({start + k * ns(101), static_cast<Addr>(256 * k), 256, true});
    want.push_back({start + k * ns(101) + ns(1), static_cast<Addr>(1024 + 256 * k), 256, false});
  }
  CHECK(memory.sent == want);
  CHECK(h.stats().memory.write_bytes == 1024);  // counted once, as one block
  CHECK_FALSE(h.busy());
}

TEST_CASE("the pieces of a block miss take a shared port's slots as they issue") {
  // 1 GHz, 1 KiB blocks (16 lines); private L1 (one block, 4 MSHRs, 1 cycle), shared L2
  // (1 cycle, one port: a line per ns); memory 100 ns. Cores 0 and 1 each read a block at 0;
  // each miss goes out as 4 pieces of 4 lines, sent 2 ns (two lookups) plus its wait at the
  // L2 port after it issues. Core 0's first piece holds the port 1-5 ns, so core 1's waits
  // 4 ns (sent at 6, not at 18 as if core 0's block held it for all 16 lines up front).
  // Later pieces issue when the previous one is back: core 0 at 102, 204, 306 (sent 2 ns
  // later), core 1 at 106, 208, 310; the last are back at 408 and 412 ns.
  EventQueue queue;
  RecordingMemory memory(queue, ns(100));
  Hierarchy h(HierarchyBuilder{}
                  .block(1024)
                  .clock("1GHz")
                  .level(defaults::one_cycle_l1().size("1KiB").assoc(1).mshrs(4))
                  .level(LevelBuilder("L2").size("4KiB").assoc(4).line(64).latency(1).shared())
                  .build(),
              Fidelity::Block, 2);
  h.attach_memory(queue, memory);
  Tick finish[2] = {-1, -1};
  h.start_range(0, 0, 1024, AccessKind::Read, [&](Tick f) { finish[0] = f; });
  h.start_range(1, 4096, 1024, AccessKind::Read, [&](Tick f) { finish[1] = f; });
  queue.run();
  CHECK(finish[0] == ns(408));
  CHECK(finish[1] == ns(412));
  std::vector<Sent> want;
  for (Tick k = 0; k < 4; ++k) {
    const Tick issue0 = k * ns(102), issue1 = k == 0 ? ns(4) : ns(106) + (k - 1) * ns(102);
    want.push_back({issue0 + ns(2), static_cast<Addr>(256 * k), 256, false});
    want.push_back({issue1 + ns(2), static_cast<Addr>(4096 + 256 * k), 256, false});
  }
  CHECK(memory.sent == want);
}

TEST_CASE("a refused miss is sent at the tick the memory has room, not on the cache clock") {
  // 1 GHz single level, 1-cycle lookup; memory 100.3 ns, one request in flight. Line 0
  // issues at 0 and is sent at 1 ns, back at 101.3 ns; line 1 issues at 1 ns and is refused
  // at 2 ns. The memory's retry comes with the completion that frees room, at 101.3 ns (a
  // cache polling on its own clock would send at 102 ns); back at 201.6 ns.
  EventQueue queue;
  RecordingMemory memory(queue, 100300, /*max_in_flight=*/1);
  Hierarchy h(HierarchyBuilder{}.clock("1GHz").level(defaults::one_cycle_l1()).build(),
              Fidelity::Line, 1);
  h.attach_memory(queue, memory);
  Tick finish = -1;
  h.start_range(0, 0, 128, AccessKind::Read, [&](Tick f) { finish = f; });
  queue.run();
  CHECK(finish == 201600);
  const std::vector<Sent> want = {{1000, 0, 64, false}, {101300, 64, 64, false}};
  CHECK(memory.sent == want);
}

namespace {
// A memory that accepts requests and never answers: the watchdog must catch it.
class BlackHole final : public mem::MemoryPort {
 public:
  bool will_accept(const mem::MemRequest&) const override { return true; }
  void send(const mem::MemRequest&) override { ++swallowed; }
  void set_completion(Completion) override {}
  void set_retry(std::function<void()>) override {}
  void request_retry() override {}
  int swallowed = 0;
};
}  // namespace

TEST_CASE("the watchdog reports a range whose miss never returns, with every component") {
  EventQueue queue;
  BlackHole memory;
  Hierarchy h(three_levels(), Fidelity::Line, 1);
  h.attach_memory(queue, memory);
  bool done = false;
  h.start_range(0, 0, 64, AccessKind::Read, [&](Tick) { done = true; });
  Watchdog watchdog;
  watchdog.watch(
      "caches", [&] { return h.busy(); }, [&] { return h.describe_state(); });
  watchdog.watch(
      "cores", [] { return false; }, [] { return std::string("core0 waiting"); });
  try {
    watchdog.run_checked(queue);
    FAIL("no stall reported");
  } catch (const SimulationStall& e) {
    std::string report = e.what();
    CHECK(report.find("work outstanding in: caches") != std::string::npos);
    CHECK(report.find("range 0: core 0, 0 units left, 1 outstanding") != std::string::npos);
    CHECK(report.find("L1[core0]: 1 lines valid, 1/16 MSHRs busy") != std::string::npos);
    CHECK(report.find("== cores (idle)\ncore0 waiting") != std::string::npos);
  }
  CHECK_FALSE(done);
  CHECK(memory.swallowed == 1);
}

TEST_CASE("a shared port serves in arrival order, not in the order its bookings are made") {
  // 1 GHz, line fidelity; private L1 (1 cycle, 8 MSHRs), shared L2 (1 cycle, 4 ports: a
  // line per 250 ps); memory 100 ns. Core 0 reads 8 lines: it issues them at 0..7 ns in one
  // look-ahead, before core 1 issues its one line at 0, so the L2 port is booked at 1..8 ns
  // first. Core 1's miss reaches the port at 1 ns, behind core 0's first line only: sent at
  // 0 + 2 ns of lookups + 250 ps, back at 102.25 ns. (Served in booking order, it waited
  // behind core 0's line at 8 ns: sent at 9.25 ns.) Core 0's lines go at 2..9 ns, the last back at
  // 109 ns.
  EventQueue queue;
  RecordingMemory memory(queue, ns(100));
  Hierarchy h(HierarchyBuilder{}
                  .clock("1GHz")
                  .level(defaults::one_cycle_l1().mshrs(8))
                  .level(LevelBuilder("L2")
                             .size("4KiB")
                             .assoc(4)
                             .line(64)
                             .latency(1)
                             .ports(4)
                             .mshrs(64)
                             .shared())
                  .build(),
              Fidelity::Line, 2);
  h.attach_memory(queue, memory);
  Tick finish[2] = {-1, -1};
  h.start_range(0, 0, 512, AccessKind::Read, [&](Tick f) { finish[0] = f; });
  h.start_range(1, 8192, 64, AccessKind::Read, [&](Tick f) { finish[1] = f; });
  queue.run();
  CHECK(finish[0] == ns(109));
  CHECK(finish[1] == ns(102) + 250);
  std::vector<Sent> want{{ns(2), 0, 64, false}, {ns(2) + 250, 8192, 64, false}};
  for (Addr k = 1; k < 8; ++k) want.push_back({ns(2 + static_cast<Tick>(k)), 64 * k, 64, false});
  CHECK(memory.sent == want);
}

namespace {
// Two destinations (address bit 12, as two DRAM channels would be), one request in flight
// at each, answered 100 ns after it is sent; a refused sender is retried when one answers.
class TwoChannelMemory final : public mem::MemoryPort {
 public:
  explicit TwoChannelMemory(EventQueue& queue) : queue_(queue) {}
  bool will_accept(const mem::MemRequest& r) const override { return !busy_[destination(r)]; }
  void send(const mem::MemRequest& r) override {
    const int d = destination(r);
    busy_[d] = true;
    sent.push_back({queue_.now(), r.addr, r.bytes, r.is_write});
    queue_.schedule(queue_.now() + ns(100), Priority::Response, [this, r, d] {
      busy_[d] = false;
      completion_(r, queue_.now());
      if (retry_wanted_) {
        retry_wanted_ = false;
        retry_();
      }
    });
  }
  void set_completion(Completion c) override { completion_ = std::move(c); }
  void set_retry(std::function<void()> retry) override { retry_ = std::move(retry); }
  void request_retry() override { retry_wanted_ = true; }
  int destinations() const override { return 2; }
  int destination(const mem::MemRequest& r) const override {
    return static_cast<int>((r.addr >> 12) & 1);
  }
  std::vector<Sent> sent;

 private:
  EventQueue& queue_;
  Completion completion_;
  std::function<void()> retry_;
  bool retry_wanted_ = false;
  bool busy_[2] = {false, false};
};
}  // namespace

TEST_CASE("a request refused by one memory channel holds up only that channel's requests") {
  // 1 GHz, one 1-cycle level, line fidelity. Core 0 reads lines 0 and 64 (channel 0): the
  // first is sent at 1 ns, the second is refused at 2 ns (channel 0 busy) and waits until the
  // first is back at 101 ns, back itself at 201 ns. Core 1 starts at 5 ns on line 4096
  // (channel 1, idle): sent at 6 ns, back at 106 ns. In one queue for the whole memory it
  // waited behind line 64: sent at 101 ns, back at 201 ns.
  EventQueue queue;
  TwoChannelMemory memory(queue);
  Hierarchy h(HierarchyBuilder{}.clock("1GHz").level(defaults::one_cycle_l1().mshrs(8)).build(),
              Fidelity::Line, 2);
  h.attach_memory(queue, memory);
  Tick finish[2] = {-1, -1};
  h.start_range(0, 0, 128, AccessKind::Read, [&](Tick f) { finish[0] = f; });
  queue.schedule(ns(5), Priority::Compute, [&] {
    h.start_range(1, 4096, 64, AccessKind::Read, [&](Tick f) { finish[1] = f; });
  });
  queue.run();
  CHECK(finish[0] == ns(201));
  CHECK(finish[1] == ns(106));
  const std::vector<Sent> want{
      {ns(1), 0, 64, false}, {ns(6), 4096, 64, false}, {ns(101), 64, 64, false}};
  CHECK(memory.sent == want);
}
