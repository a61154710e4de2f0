// A divisible request (MemRequest::part_bytes: a block-fidelity piece standing for lines)
// must reach the DRAM as those lines would: each part enters its channels' queues when
// they have room, waiting in order behind the parts before it in a FIFO of its first
// channel, as a sender's per-destination FIFOs (mem/refused_queues.h) hold refused lines.
// So the same requests sent as lines through such FIFOs issue the same commands at the
// same cycles, and the block completes when its last line would.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "dram_test_util.h"
#include "mem/refused_queues.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

// Sends lines as the cache hierarchy's timed path does: a FIFO per destination, drained at
// the memory's retry.
struct LineSender {
  explicit LineSender(DramSystem& d) : dram(d) {
    fifos.reset(static_cast<std::size_t>(d.destinations()));
    d.set_retry([this] { pump(); });
  }
  void send(const mem::MemRequest& r) {
    const auto q = static_cast<std::size_t>(dram.destination(r));
    if (fifos.empty(q) && dram.will_accept(r)) {
      dram.send(r);
      return;
    }
    fifos.push(q, r);
    ++queued;
    dram.request_retry();
  }
  void pump() {
    fifos.drain(dram, [this](const mem::MemRequest& r) { dram.send(r); });
    if (fifos.size() != 0) dram.request_retry();
  }
  DramSystem& dram;
  mem::RefusedQueues fifos;
  std::uint64_t queued = 0;  // lines that had to wait
};

struct Block {
  Tick at;
  mem::Addr addr;
  std::uint32_t bytes;
  bool is_write;
};

using Key = std::tuple<Cycle, int, int, int, int, int, std::int64_t>;
std::vector<Key> sorted(const std::vector<IssuedCommand>& log) {
  std::vector<Key> keys;
  for (const IssuedCommand& c : log)
    keys.emplace_back(c.cycle, c.channel, static_cast<int>(c.command), c.rank, c.bankgroup, c.bank,
                      c.row);
  std::sort(keys.begin(), keys.end());
  return keys;
}

void compare(const DramSpec& spec, std::uint32_t line, const std::vector<Block>& blocks) {
  Rig whole(spec), lines(spec);
  LineSender sender(*lines.dram);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block b = blocks[i];
    whole.queue.schedule(b.at, Priority::Compute, [&whole, b, line, i] {
      mem::MemRequest r;
      r.addr = b.addr;
      r.bytes = b.bytes;
      r.part_bytes = line;
      r.is_write = b.is_write;
      r.id = i;
      REQUIRE(whole.dram->divisible(r));
      REQUIRE(whole.dram->will_accept(r));  // always taken
      whole.dram->send(r);
    });
    lines.queue.schedule(b.at, Priority::Compute, [&sender, b, line] {
      for (std::uint32_t off = 0; off < b.bytes; off += line) {
        mem::MemRequest r;
        r.addr = b.addr + off;
        r.bytes = line;
        r.is_write = b.is_write;
        sender.send(r);
      }
    });
  }
  while (whole.queue.step()) {
  }
  while (lines.queue.step()) {
  }
  CHECK(whole.completed == blocks.size());
  std::uint64_t line_count = 0;
  for (const Block& b : blocks) line_count += b.bytes / line;
  CHECK(lines.completed == line_count);
  // Lines had to wait (else the test shows nothing): the queues are smaller than a block.
  CHECK(sender.queued >= line_count / 4);
  CHECK(whole.commands[static_cast<int>(Command::RD)] +
            whole.commands[static_cast<int>(Command::WR)] ==
        lines.commands[static_cast<int>(Command::RD)] +
            lines.commands[static_cast<int>(Command::WR)]);
  CHECK(whole.last_done == lines.last_done);
  const auto a = sorted(whole.log), b = sorted(lines.log);
  REQUIRE(a.size() == b.size());
  std::size_t first_difference = a.size();
  for (std::size_t i = 0; i < a.size() && first_difference == a.size(); ++i)
    if (a[i] != b[i]) first_difference = i;
  CHECK(first_difference == a.size());
  CHECK(whole.checker.violations().empty());
}

}  // namespace

TEST_CASE("a divisible request issues the commands of its lines sent through per-channel FIFOs") {
  SECTION("DDR4, two channels, 8-entry queues, 64 B lines") {
    DramSpec spec = preset("ddr4-3200");
    spec.org.channels = 2;
    spec.ctrl.read_queue = spec.ctrl.write_queue = 8;
    spec.ctrl.write_low_watermark = 2;
    spec.ctrl.write_high_watermark = 6;
    compare(spec, 64,
            {{0, 0, 4096, false},
             {5000, 1 << 20, 4096, false},
             {6000, 3 << 20, 2048, true},
             {90000, 5 << 20, 4096, false}});
  }
  SECTION("HBM3, 128 B lines of 32 B atoms, 4-entry queues") {
    DramSpec spec = preset("hbm3");
    spec.ctrl.read_queue = spec.ctrl.write_queue = 4;
    spec.ctrl.write_low_watermark = 1;
    spec.ctrl.write_high_watermark = 3;
    compare(spec, 128,
            {{0, 0, 4096, false}, {1000, 1 << 22, 4096, true}, {2000, 1 << 23, 4096, false}});
  }
}

TEST_CASE("a line is refused by a channel whose queue has room while parts wait for it") {
  DramSpec spec = preset("ddr4-3200");
  spec.org.channels = 1;
  spec.ctrl.read_queue = 4;
  Rig rig(spec);
  mem::MemRequest block;
  block.addr = 0;
  block.bytes = 1024;  // 16 lines: 4 enter, 12 wait
  block.part_bytes = 64;
  rig.dram->send(block);
  CHECK_FALSE(rig.dram->has_room(0, false, 1));
  mem::MemRequest line;
  line.addr = 1 << 20;
  CHECK(rig.dram->refused_by(line) == 0);
  const std::uint64_t freed = rig.dram->room_freed(0);
  // Run until the first read frees an entry: the parts' admission is due at that tick, and
  // until it runs the line must not overtake them.
  while (rig.commands[static_cast<int>(Command::RD)] == 0 && rig.queue.step()) {
  }
  REQUIRE(rig.commands[static_cast<int>(Command::RD)] >= 1);
  CHECK(rig.dram->room_freed(0) > freed);
  if (rig.dram->has_room(0, false, 1)) CHECK(rig.dram->refused_by(line) == 0);
  while (rig.completed == 0 && rig.queue.step()) {
  }
  CHECK(rig.completed == 1);
  CHECK(rig.commands[static_cast<int>(Command::RD)] == 16);
  CHECK(rig.dram->refused_by(line) == -1);  // all parts in, all served
}
