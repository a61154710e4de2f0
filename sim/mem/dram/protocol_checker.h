#pragma once
// An independent JEDEC protocol checker over the issued command stream. It shares no code
// with the controller's timing state: it keeps each channel's recent command history and
// checks every new command pairwise against it with the minimum gaps written out from the
// standards (JESD79-4 DDR4, JESD79-5 DDR5, JESD235/238 HBM), plus the state rules (no ACT
// to an open bank, no column access to a closed bank or another row, no refresh with open
// rows), the four-activate window, data-bus overlap, one command per cycle, and the
// refresh interval (at most 8 postponed refreshes, JESD79-4 §4.26: gap <= 9 x tREFI).
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"

namespace fusim::dram {

class ProtocolChecker {
 public:
  explicit ProtocolChecker(const DramSpec& spec);
  void observe(const IssuedCommand& c);

  std::uint64_t commands() const { return commands_; }
  std::uint64_t violation_count() const { return violation_count_; }
  // The first 100 violations, each naming the channel, cycle, commands and constraint.
  const std::vector<std::string>& violations() const { return violations_; }
  // The minimum gap JEDEC requires between `earlier` and `later` on one channel (0: none).
  // Public so tests can state the rule they exercise. `name` receives the constraint name.
  Cycle required_gap(const IssuedCommand& earlier, const IssuedCommand& later,
                     const char** name) const;

 private:
  struct ChannelState {
    std::deque<IssuedCommand> history;
    std::vector<std::int64_t> open_row;  // per bank: -1 closed
    std::vector<Cycle> last_refresh;     // per rank (all-bank) or per bank (per-bank)
    Cycle last_cycle = -1;
  };
  void violation(const IssuedCommand& c, const std::string& what);
  int bank_index(const IssuedCommand& c) const {
    return (c.rank * spec_.org.bankgroups + c.bankgroup) * spec_.org.banks_per_group + c.bank;
  }

  DramSpec spec_;
  Cycle window_;
  std::vector<ChannelState> channels_;
  std::uint64_t commands_ = 0, violation_count_ = 0;
  std::vector<std::string> violations_;
};

}  // namespace fusim::dram
