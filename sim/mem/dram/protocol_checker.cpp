#include "mem/dram/protocol_checker.h"

#include <fmt/format.h>
#include <algorithm>

namespace fusim::dram {

ProtocolChecker::ProtocolChecker(const DramSpec& spec) : spec_(spec) {
  const Timing& t = spec.t;
  window_ = std::max({t.tRFC, t.tRFCpb, t.tRC, t.tFAW, t.tCWL + t.tBL + t.tWR,
                      t.tCWL + t.tBL + t.tWTR_L, t.tCL + t.tBL + t.tRTRS + 2}) +
            1;
  channels_.resize(spec.org.logical_channels());
  for (auto& ch : channels_) {
    ch.open_row.assign(spec.org.banks_per_channel(), -1);
    ch.last_refresh.assign(
        spec.ctrl.refresh == RefreshMode::AllBank ? spec.org.ranks : spec.org.banks_per_channel(),
        0);
  }
}

Cycle ProtocolChecker::required_gap(const IssuedCommand& p, const IssuedCommand& n,
                                    const char** name) const {
  const Timing& t = spec_.t;
  using C = Command;
  const C a = p.command, b = n.command;
  const bool same_rank = p.rank == n.rank;
  const bool same_group = same_rank && p.bankgroup == n.bankgroup;
  const bool same_bank = same_group && p.bank == n.bank;
  const bool a_ref = a == C::REFab, b_ref = b == C::REFab;
  Cycle gap = 0;
  const char* why = "";
  auto need = [&](bool applies, Cycle g, const char* rule) {
    if (applies && g > gap) gap = g, why = rule;
  };
  const bool rd_a = a == C::RD, wr_a = a == C::WR, rd_b = b == C::RD, wr_b = b == C::WR;
  // Same bank (JESD79-4 Table 132 / JESD79-5 / JESD235: tRC, tRCD, tRAS, tRP, tRTP, tWR).
  if (same_bank && !a_ref && !b_ref) {
    need(a == C::ACT && b == C::ACT, t.tRC, "tRC");
    need(a == C::ACT && (rd_b || wr_b), t.tRCD, "tRCD");
    need(a == C::ACT && b == C::PRE, t.tRAS, "tRAS");
    need(a == C::PRE && (b == C::ACT || b == C::REFpb), t.tRP, "tRP");
    need(rd_a && b == C::PRE, t.tRTP, "tRTP");
    need(wr_a && b == C::PRE, t.tCWL + t.tBL + t.tWR, "WL+BL/2+tWR");
    need(a == C::REFpb && (b == C::ACT || b == C::REFpb), t.tRFCpb, "tRFCpb");
  }
  if (same_group) {
    need(a == C::ACT && b == C::ACT && !same_bank, t.tRRD_L, "tRRD_L");
    need(rd_a && rd_b, t.tCCD_L, "tCCD_L");
    need(wr_a && wr_b, t.tCCD_L, "tCCD_L");
    need(wr_a && rd_b, t.tCWL + t.tBL + t.tWTR_L, "WL+BL/2+tWTR_L");
  }
  if (same_rank) {
    need(a == C::ACT && b == C::ACT && !same_bank, t.tRRD_S, "tRRD_S");
    need(rd_a && rd_b, t.tCCD_S, "tCCD_S");
    need(wr_a && wr_b, t.tCCD_S, "tCCD_S");
    need(wr_a && rd_b, t.tCWL + t.tBL + t.tWTR_S, "WL+BL/2+tWTR_S");
    need(rd_a && wr_b, t.tCL + t.tBL + 2 - t.tCWL, "RL+BL/2-WL+2 (read to write)");
    need(a == C::ACT && b_ref, t.tRC, "tRC (ACT to REF)");
    need(a == C::PRE && b_ref, t.tRP, "tRP (PRE to REF)");
    need(a_ref && (b == C::ACT || b_ref || b == C::REFpb), t.tRFC, "tRFC");
    need(a == C::REFpb && b == C::REFpb && !same_bank, t.tRREFD, "tRREFD");
    need(a == C::REFpb && b == C::ACT && !same_bank, t.tRREFD, "tRREFD");
    need(a == C::REFpb && b_ref, t.tRFCpb, "tRFCpb (to REFab)");
  } else {
    // Rank to rank on the shared data bus: one burst plus the turnaround tRTRS.
    need(rd_a && rd_b, t.tBL + t.tRTRS, "BL/2+tRTRS (rank switch)");
    need(wr_a && wr_b, t.tBL + t.tRTRS, "BL/2+tRTRS (rank switch)");
    need(rd_a && wr_b, t.tCL + t.tBL + t.tRTRS - t.tCWL, "RL+BL/2+tRTRS-WL");
    need(wr_a && rd_b, t.tCWL + t.tBL + t.tRTRS - t.tCL, "WL+BL/2+tRTRS-RL");
  }
  *name = why;
  return gap;
}

void ProtocolChecker::violation(const IssuedCommand& c, const std::string& what) {
  ++violation_count_;
  if (violations_.size() < 100) {
    violations_.push_back(fmt::format("ch{} cycle {}: {} rank {} bg {} bank {}: {}", c.channel,
                                      c.cycle, to_string(c.command), c.rank, c.bankgroup, c.bank,
                                      what));
  }
}

void ProtocolChecker::observe(const IssuedCommand& c) {
  ++commands_;
  const Timing& t = spec_.t;
  ChannelState& ch = channels_.at(c.channel);
  if (c.cycle <= ch.last_cycle) {
    violation(c, fmt::format("command bus: issued at or before the previous command (cycle {})",
                             ch.last_cycle));
  }
  ch.last_cycle = std::max(ch.last_cycle, c.cycle);
  while (!ch.history.empty() && ch.history.front().cycle < c.cycle - window_)
    ch.history.pop_front();

  int acts_in_window = 0;
  const bool is_col = c.command == Command::RD || c.command == Command::WR;
  const Cycle start = c.cycle + (c.command == Command::RD ? t.tCL : t.tCWL);
  for (const IssuedCommand& p : ch.history) {
    const char* rule = "";
    const Cycle gap = required_gap(p, c, &rule);
    if (c.cycle - p.cycle < gap) {
      violation(c, fmt::format("{} cycles after {} at {} (rank {} bg {} bank {}); {} needs {}",
                               c.cycle - p.cycle, to_string(p.command), p.cycle, p.rank,
                               p.bankgroup, p.bank, rule, gap));
    }
    if (c.command == Command::ACT && p.command == Command::ACT && p.rank == c.rank &&
        c.cycle - p.cycle < t.tFAW) {
      ++acts_in_window;
    }
    // Data bus: bursts of one channel never overlap; a rank switch leaves tRTRS between.
    if (is_col && (p.command == Command::RD || p.command == Command::WR)) {
      const Cycle p_start = p.cycle + (p.command == Command::RD ? t.tCL : t.tCWL);
      const Cycle sep = p.rank == c.rank ? 0 : t.tRTRS;
      if (start < p_start + t.tBL + sep && p_start < start + t.tBL + sep) {
        violation(c, fmt::format("data burst [{}, {}) overlaps the burst of {} at {}", start,
                                 start + t.tBL, to_string(p.command), p.cycle));
      }
    }
  }
  if (acts_in_window >= 4) violation(c, "tFAW: a fifth ACT within the four-activate window");

  // Row state.
  const int bank = bank_index(c);
  const int rank_first = c.rank * spec_.org.banks_per_rank();
  switch (c.command) {
    case Command::ACT:
      if (ch.open_row[bank] >= 0) violation(c, "ACT to a bank with an open row");
      ch.open_row[bank] = c.row;
      break;
    case Command::PRE:
      ch.open_row[bank] = -1;
      break;
    case Command::RD:
    case Command::WR:
      if (ch.open_row[bank] < 0)
        violation(c, "column access to a closed bank");
      else if (ch.open_row[bank] != c.row)
        violation(c, fmt::format("column access to row {} while row {} is open", c.row,
                                 ch.open_row[bank]));
      break;
    case Command::REFab: {
      for (int b = rank_first; b < rank_first + spec_.org.banks_per_rank(); ++b) {
        if (ch.open_row[b] >= 0) {
          violation(c, "REFab with a row open in the rank");
          break;
        }
      }
      Cycle& last = ch.last_refresh[c.rank];
      if (c.cycle - last > 9 * t.tREFI)
        violation(c, "more than 8 refreshes postponed (gap > 9 tREFI)");
      last = c.cycle;
      break;
    }
    case Command::REFpb: {
      if (ch.open_row[bank] >= 0) violation(c, "REFpb to a bank with an open row");
      if (static_cast<std::size_t>(bank) < ch.last_refresh.size()) {
        Cycle& last = ch.last_refresh[bank];
        if (c.cycle - last > 9 * t.tREFI) violation(c, "bank not refreshed for more than 9 tREFI");
        last = c.cycle;
      }
      break;
    }
  }
  ch.history.push_back(c);
}

}  // namespace fusim::dram
