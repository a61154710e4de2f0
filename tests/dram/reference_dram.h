#pragma once
// A reference model of the DRAM system for differential tests: the controller as it was
// first written (commit ef1b3f5^: every decision rescans the whole active queue and hands
// every request to the scheduler), with its own copy of the JEDEC timing rules, driven by a
// plain cycle loop instead of the event queue. Deliberately slow and simple, and frozen:
// the production controller (sim/mem/dram/controller.*) must issue exactly its commands,
// channel by channel, cycle by cycle. The golden hashes of command_stream_test.cpp pin
// both; where a hash differs, comparing against this model names the first differing
// command. Only an intended model change edits this file (and then the hashes).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mem/dram/address_mapping.h"
#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/scheduler.h"
#include "mem/dram/trace_replay.h"

namespace fusim::dram::testing {

class ReferenceChannel;

// The DRAM system of `spec`: the same address mapping and schedulers as production (they
// are not under test here), one reference channel per logical channel.
class ReferenceDram {
 public:
  explicit ReferenceDram(const DramSpec& spec);
  ~ReferenceDram();

  // Room for a request of `bytes` at `addr` (DramSystem::will_accept's rule, blocks too).
  bool will_accept(mem::Addr addr, std::uint32_t bytes, bool is_write) const;
  // Queues its atoms as arriving at cycle `now`.
  void send(mem::Addr addr, std::uint32_t bytes, bool is_write, int requester, Cycle now);
  // Issues, channel by channel, every command decided for a cycle <= `now`; returns whether
  // any of them was a column command (it freed a queue entry).
  bool issue_until(Cycle now);
  // The earliest next command of any channel (kNoCycle when all are idle).
  Cycle next_cycle();
  // Catches idle channels up to `until` (DramSystem::finish at that cycle).
  void finish(Cycle until);

  const std::vector<std::vector<IssuedCommand>>& per_channel() const { return log_; }

 private:
  DramSpec spec_;
  AddressMapping mapping_;
  std::vector<std::unique_ptr<ReferenceChannel>> channels_;
  std::vector<std::vector<IssuedCommand>> log_;
};

// replay_trace's feeder on the reference: requests in trace order, each sent at its arrival
// cycle or, while its channels lack room, at the first cycle a column command frees it;
// then `end_cycle` (the production replay's final cycle) settles the idle channels.
std::vector<std::vector<IssuedCommand>> reference_replay(const DramSpec& spec,
                                                         const std::vector<TraceRequest>& trace,
                                                         Cycle end_cycle, std::uint32_t bytes = 64);

// The first difference between two channels' command streams, as one line naming the
// channel, the command's index and both commands; empty where they are equal.
std::string first_difference(const std::vector<std::vector<IssuedCommand>>& got,
                             const std::vector<std::vector<IssuedCommand>>& want);
std::string describe(const IssuedCommand& c);

}  // namespace fusim::dram::testing
