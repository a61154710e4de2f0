#pragma once
// The timing half of one channel's state machine: for every command, the earliest cycle it
// may issue at each level (bank, bank group, rank), kept Ramulator-style as "next allowed"
// cycles that every issued command pushes forward by the JEDEC constraints it starts.
// Row state (which row is open) lives in the controller; the protocol checker re-derives
// all of this independently from the command stream.
#include <array>
#include <vector>

#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"

namespace fusim::dram {

class BankTiming {
 public:
  BankTiming(const Organization& org, const Timing& t);

  // Earliest cycle `c` may issue to (rank, bankgroup, flat bank) by timing alone.
  Cycle earliest(Command c, int rank, int bankgroup, int flat_bank) const {
    const int ci = static_cast<int>(c);
    Cycle e = rank_[rank * kCommandKinds + ci];
    if (c != Command::REFab) {
      e = std::max(e, group_[(rank * bankgroups_ + bankgroup) * kCommandKinds + ci]);
      e = std::max(e, bank_[flat_bank * kCommandKinds + ci]);
    }
    return e;
  }
  // The three levels of earliest() apart, for a caller that caches the bank level: it
  // changes only when a command goes to that very bank (REFab aside, which has none).
  Cycle bank_level(Command c, int flat_bank) const {
    return bank_[flat_bank * kCommandKinds + static_cast<int>(c)];
  }
  // [(rank * bankgroups + bankgroup) * kCommandKinds + command], [rank * kCommandKinds + command]
  const Cycle* group_levels() const { return group_.data(); }
  const Cycle* rank_levels() const { return rank_.data(); }

  void issue(Command c, int rank, int bankgroup, int flat_bank, Cycle at);

 private:
  static void push(Cycle& slot, Cycle v) { slot = std::max(slot, v); }
  Cycle& at_bank(int b, Command c) { return bank_[b * kCommandKinds + static_cast<int>(c)]; }
  Cycle& at_group(int r, int g, Command c) {
    return group_[(r * bankgroups_ + g) * kCommandKinds + static_cast<int>(c)];
  }
  Cycle& at_rank(int r, Command c) { return rank_[r * kCommandKinds + static_cast<int>(c)]; }

  struct FawWindow {
    std::array<Cycle, 4> times{
        {-(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4)}};
    int oldest = 0;
  };

  Timing t_;
  int ranks_, bankgroups_, banks_per_rank_;
  std::vector<Cycle> bank_, group_, rank_;
  std::vector<FawWindow> faw_;
};

}  // namespace fusim::dram
