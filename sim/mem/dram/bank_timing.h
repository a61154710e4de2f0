#pragma once
// The timing half of one channel's state machine: for every command, the earliest cycle it
// may issue at each level (bank, bank group, rank), kept Ramulator-style as "next allowed"
// cycles that every issued command pushes forward by the JEDEC constraints it starts.
// Row state (which row is open) lives in the controller; the protocol checker re-derives
// all of this independently from the command stream.
//
// Every level only moves forward (each push is a max), so the earliest cycle of a command
// is the max of its three levels, and the bank and bank-group levels can be kept already
// merged per bank: near(c)[bank] = max(bank level, bank-group level) of the four request
// commands (ACT, PRE, RD, WR). A decision then reads one value per bank and one per rank
// instead of three, and the first-ready pass needs no gather (first_ready.cpp).
#include <array>
#include <vector>

#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"

namespace fusim::dram {

class BankTiming {
 public:
  BankTiming(const Organization& org, const Timing& t);

  // The commands with per-bank merged levels (near()): ACT, PRE, RD, WR.
  static constexpr int kNearKinds = 4;
  // Banks rounded up to whole vectors of 8: the length of each near() row.
  static std::size_t lanes(int banks) { return (static_cast<std::size_t>(banks) + 7) / 8 * 8; }

  // Earliest cycle `c` may issue to (rank, bankgroup, flat bank) by timing alone.
  Cycle earliest(Command c, int rank, int /*bankgroup*/, int flat_bank) const {
    const int ci = static_cast<int>(c);
    const Cycle r = rank_[rank * kCommandKinds + ci];
    if (ci < kNearKinds) return std::max(r, near_[ci * lanes_ + flat_bank]);
    if (c == Command::REFpb) return std::max(r, refpb_bank_[flat_bank]);
    return r;  // REFab: a rank-level command
  }
  // [command * lanes + flat bank] for command < kNearKinds: max of the bank and bank-group
  // levels; [rank * kCommandKinds + command]: the rank levels.
  const Cycle* near_levels() const { return near_.data(); }
  const Cycle* rank_levels() const { return rank_.data(); }
  std::size_t near_lanes() const { return lanes_; }

  void issue(Command c, int rank, int bankgroup, int flat_bank, Cycle at);

 private:
  static void push(Cycle& slot, Cycle v) { slot = std::max(slot, v); }
  void push_bank(int b, Command c, Cycle v) { push(near_[static_cast<int>(c) * lanes_ + b], v); }
  // A bank-group level: pushed into each bank of the group (contiguous flat banks).
  void push_group(int r, int g, Command c, Cycle v) {
    Cycle* n = &near_[static_cast<int>(c) * lanes_ + (r * bankgroups_ + g) * banks_per_group_];
    if (banks_per_group_ == 4) {  // (every preset: DDR4, DDR5, HBM) unrolled, no loop branch
      push(n[0], v), push(n[1], v), push(n[2], v), push(n[3], v);
      return;
    }
    for (int k = 0; k < banks_per_group_; ++k) push(n[k], v);
  }
  Cycle& at_rank(int r, Command c) { return rank_[r * kCommandKinds + static_cast<int>(c)]; }

  struct FawWindow {
    std::array<Cycle, 4> times{
        {-(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4)}};
    int oldest = 0;
  };

  Timing t_;
  int ranks_, bankgroups_, banks_per_group_;
  std::size_t lanes_;
  Cycle read_to_write_;  // RL + BL/2 - WL + 2 tCK (JESD79-4 §4.21)
  // The sums issue() pushes by, worked out once (names: command, then the level it moves).
  Cycle column_to_column_;         // max(tCCD_S, tBL), same rank
  Cycle read_to_write_other_;      // to another rank: RL + BL/2 + tRTRS - WL
  Cycle read_to_read_other_;       // tBL + tRTRS
  Cycle write_to_pre_;             // WL + BL/2 + tWR
  Cycle write_to_read_group_;      // WL + BL/2 + tWTR_L
  Cycle write_to_read_rank_;       // WL + BL/2 + tWTR_S
  Cycle write_to_write_other_;     // tBL + tRTRS
  Cycle write_to_read_other_;      // WL + BL/2 + tRTRS - RL
  std::vector<Cycle> near_;        // [command * lanes + bank], command < kNearKinds
  std::vector<Cycle> refpb_bank_;  // the bank level of REFpb
  std::vector<Cycle> rank_;        // [rank * kCommandKinds + command]
  std::vector<FawWindow> faw_;
};

}  // namespace fusim::dram
