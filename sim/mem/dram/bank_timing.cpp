#include "mem/dram/bank_timing.h"

namespace fusim::dram {

BankTiming::BankTiming(const Organization& org, const Timing& t)
    : t_(t),
      ranks_(org.ranks),
      bankgroups_(org.bankgroups),
      banks_per_group_(org.banks_per_group),
      lanes_(lanes(org.banks_per_channel())),
      read_to_write_(t.tCL + t.tBL + 2 - t.tCWL),
      column_to_column_(std::max(t.tCCD_S, t.tBL)),
      read_to_write_other_(t.tCL + t.tBL + t.tRTRS - t.tCWL),
      read_to_read_other_(t.tBL + t.tRTRS),
      write_to_pre_(t.tCWL + t.tBL + t.tWR),
      write_to_read_group_(t.tCWL + t.tBL + t.tWTR_L),
      write_to_read_rank_(t.tCWL + t.tBL + t.tWTR_S),
      write_to_write_other_(t.tBL + t.tRTRS),
      write_to_read_other_(t.tCWL + t.tBL + t.tRTRS - t.tCL),
      near_(kNearKinds * lanes_, 0),
      refpb_bank_(lanes_, 0),
      rank_(static_cast<std::size_t>(org.ranks) * kCommandKinds, 0),
      faw_(org.ranks) {}

// The constraints each command starts. Sources: JESD79-4B (DDR4) §4.x timing tables and
// Table 132/133 (tCCD_S/L, tRRD_S/L, tWTR_S/L), JESD79-5 (DDR5) same names, JESD235/238
// (HBM2/HBM3) per pseudo-channel. Read-to-write on one channel: RL + BL/2 - WL + 2 tCK
// (JESD79-4 §4.21, one cycle of bus turnaround plus the write preamble); rank-to-rank
// switches add tRTRS on the shared data bus.
void BankTiming::issue(Command c, int r, int g, int b, Cycle at) {
  const Timing& t = t_;
  switch (c) {
    case Command::ACT: {
      push_bank(b, Command::ACT, at + t.tRC);
      push_bank(b, Command::RD, at + t.tRCD);
      push_bank(b, Command::WR, at + t.tRCD);
      push_bank(b, Command::PRE, at + t.tRAS);
      push_group(r, g, Command::ACT, at + t.tRRD_L);
      push(at_rank(r, Command::ACT), at + t.tRRD_S);
      push(at_rank(r, Command::REFab), at + t.tRC);
      push(at_rank(r, Command::REFpb), at + t.tRRD_S);
      // tFAW: at most four activates in any tFAW window of one rank (JESD79-4 §4.9). The
      // fourth-latest activate only moves forward, so its bound is kept in the rank's ACT
      // slot like every other constraint.
      auto& w = faw_[r];
      w.times[w.oldest] = at;
      w.oldest = (w.oldest + 1) & 3;
      push(at_rank(r, Command::ACT), w.times[w.oldest] + t.tFAW);
      break;
    }
    case Command::PRE:
      push_bank(b, Command::ACT, at + t.tRP);
      push(refpb_bank_[b], at + t.tRP);
      push(at_rank(r, Command::REFab), at + t.tRP);
      break;
    case Command::RD:
      push_bank(b, Command::PRE, at + t.tRTP);
      push_group(r, g, Command::RD, at + t.tCCD_L);
      push(at_rank(r, Command::RD), at + column_to_column_);
      push(at_rank(r, Command::WR), at + read_to_write_);
      for (int o = 0; o < ranks_; ++o) {
        if (o == r) continue;
        push(at_rank(o, Command::WR), at + read_to_write_other_);
        push(at_rank(o, Command::RD), at + read_to_read_other_);
      }
      break;
    case Command::WR:
      push_bank(b, Command::PRE, at + write_to_pre_);
      push_group(r, g, Command::WR, at + t.tCCD_L);
      push_group(r, g, Command::RD, at + write_to_read_group_);
      push(at_rank(r, Command::WR), at + column_to_column_);
      push(at_rank(r, Command::RD), at + write_to_read_rank_);
      for (int o = 0; o < ranks_; ++o) {
        if (o == r) continue;
        push(at_rank(o, Command::WR), at + write_to_write_other_);
        push(at_rank(o, Command::RD), at + write_to_read_other_);
      }
      break;
    case Command::REFab:
      push(at_rank(r, Command::ACT), at + t.tRFC);
      push(at_rank(r, Command::REFab), at + t.tRFC);
      push(at_rank(r, Command::REFpb), at + t.tRFC);
      break;
    case Command::REFpb:
      push_bank(b, Command::ACT, at + t.tRFCpb);
      push(refpb_bank_[b], at + t.tRFCpb);
      push(at_rank(r, Command::REFpb), at + t.tRREFD);
      push(at_rank(r, Command::ACT), at + t.tRREFD);
      push(at_rank(r, Command::REFab), at + t.tRFCpb);
      break;
  }
}

}  // namespace fusim::dram
