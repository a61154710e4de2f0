#pragma once
// Small builders for DRAM tests: a preset by name from the source tree, a system with a
// protocol checker attached, and a helper that sends one request and runs to completion.
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/protocol_checker.h"

namespace fusim::dram::testing {

inline DramSpec preset(const std::string& name) {
  return load_dram_preset(std::string(FUSIM_SOURCE_DIR) + "/models/machines/dram/" + name +
                          ".json");
}

inline const char* const kPresets[] = {"ddr4-3200", "ddr5-4800", "ddr5-5600", "hbm2e", "hbm3"};

// A DRAM system wired to an event queue and an independent protocol checker.
struct Rig {
  explicit Rig(const DramSpec& spec)
      : dram(std::make_unique<DramSystem>(spec, queue)), checker(spec) {
    dram->set_command_observer([this](const IssuedCommand& c) {
      checker.observe(c);
      ++commands[static_cast<int>(c.command)];
      last_command = c;
      log.push_back(c);
    });
    dram->set_completion([this](const mem::MemRequest&, Tick done) {
      ++completed;
      last_done = done;
    });
  }
  // Sends one request at tick `at` (a multiple of tCK or not) and runs until it is done;
  // returns its latency in ps.
  Tick one(mem::Addr addr, bool is_write, Tick at) {
    queue.schedule(at, Priority::Compute, [this, addr, is_write] {
      mem::MemRequest r;
      r.addr = addr;
      r.is_write = is_write;
      dram->send(r);
    });
    const std::uint64_t before = completed;
    while (completed == before && queue.step()) {
    }
    return last_done - at;
  }
  EventQueue queue;
  std::unique_ptr<DramSystem> dram;
  ProtocolChecker checker;
  std::uint64_t completed = 0;
  Tick last_done = 0;
  std::uint64_t commands[kCommandKinds] = {};
  IssuedCommand last_command;
  std::vector<IssuedCommand> log;
};

}  // namespace fusim::dram::testing
