// The reference DRAM model (reference_dram.h). Its channel is the controller of commit
// ef1b3f5^ nearly line for line: write draining by watermarks, refresh (due precharges
// first), the scheduler over every request of the active queue, row-policy closes, refresh
// winning ties over requests and requests over closes. Later features that are part of the
// model are added the simplest way: a block larger than a queue is admitted whole into the
// empty queue (67f55c3); a row activated for a request is not precharged for the other
// queue's requests before that request is served, which is served meanwhile (its column
// command competes as its own part of the decision, after refresh and before requests).
// Timing: the "next allowed cycle" rules of bank_timing.cpp as they
// stood then, copied so that a change there cannot change this model too.
#include "reference_dram.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "core/error.h"

namespace fusim::dram::testing {

namespace {

class RefTiming {
 public:
  RefTiming(const Organization& org, const Timing& t)
      : t_(t),
        ranks_(org.ranks),
        bankgroups_(org.bankgroups),
        bank_(static_cast<std::size_t>(org.banks_per_channel()) * kCommandKinds, 0),
        group_(static_cast<std::size_t>(org.ranks * org.bankgroups) * kCommandKinds, 0),
        rank_(static_cast<std::size_t>(org.ranks) * kCommandKinds, 0),
        faw_(org.ranks) {}

  Cycle earliest(Command c, int r, int g, int b) const {
    const int ci = static_cast<int>(c);
    Cycle e = rank_[r * kCommandKinds + ci];
    if (c != Command::REFab) {
      e = std::max(e, group_[(r * bankgroups_ + g) * kCommandKinds + ci]);
      e = std::max(e, bank_[b * kCommandKinds + ci]);
    }
    return e;
  }

  void issue(Command c, int r, int g, int b, Cycle at) {
    const Timing& t = t_;
    const Cycle read_to_write = t.tCL + t.tBL + 2 - t.tCWL;
    switch (c) {
      case Command::ACT: {
        push(bank(b, Command::ACT), at + t.tRC);
        push(bank(b, Command::RD), at + t.tRCD);
        push(bank(b, Command::WR), at + t.tRCD);
        push(bank(b, Command::PRE), at + t.tRAS);
        push(group(r, g, Command::ACT), at + t.tRRD_L);
        push(rank(r, Command::ACT), at + t.tRRD_S);
        push(rank(r, Command::REFab), at + t.tRC);
        push(rank(r, Command::REFpb), at + t.tRRD_S);
        Faw& w = faw_[r];  // at most four activates in any tFAW window of a rank
        w.times[w.oldest] = at;
        w.oldest = (w.oldest + 1) & 3;
        push(rank(r, Command::ACT), w.times[w.oldest] + t.tFAW);
        break;
      }
      case Command::PRE:
        push(bank(b, Command::ACT), at + t.tRP);
        push(bank(b, Command::REFpb), at + t.tRP);
        push(rank(r, Command::REFab), at + t.tRP);
        break;
      case Command::RD:
        push(bank(b, Command::PRE), at + t.tRTP);
        push(group(r, g, Command::RD), at + t.tCCD_L);
        push(rank(r, Command::RD), at + std::max(t.tCCD_S, t.tBL));
        for (int o = 0; o < ranks_; ++o) {
          push(rank(o, Command::WR),
               at + (o == r ? read_to_write : t.tCL + t.tBL + t.tRTRS - t.tCWL));
          if (o != r) push(rank(o, Command::RD), at + t.tBL + t.tRTRS);
        }
        break;
      case Command::WR:
        push(bank(b, Command::PRE), at + t.tCWL + t.tBL + t.tWR);
        push(group(r, g, Command::WR), at + t.tCCD_L);
        push(group(r, g, Command::RD), at + t.tCWL + t.tBL + t.tWTR_L);
        push(rank(r, Command::WR), at + std::max(t.tCCD_S, t.tBL));
        push(rank(r, Command::RD), at + t.tCWL + t.tBL + t.tWTR_S);
        for (int o = 0; o < ranks_; ++o) {
          if (o == r) continue;
          push(rank(o, Command::WR), at + t.tBL + t.tRTRS);
          push(rank(o, Command::RD), at + t.tCWL + t.tBL + t.tRTRS - t.tCL);
        }
        break;
      case Command::REFab:
        push(rank(r, Command::ACT), at + t.tRFC);
        push(rank(r, Command::REFab), at + t.tRFC);
        push(rank(r, Command::REFpb), at + t.tRFC);
        break;
      case Command::REFpb:
        push(bank(b, Command::ACT), at + t.tRFCpb);
        push(bank(b, Command::REFpb), at + t.tRFCpb);
        push(rank(r, Command::REFpb), at + t.tRREFD);
        push(rank(r, Command::ACT), at + t.tRREFD);
        push(rank(r, Command::REFab), at + t.tRFCpb);
        break;
    }
  }

 private:
  struct Faw {
    std::array<Cycle, 4> times{
        {-(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4), -(INT64_MAX / 4)}};
    int oldest = 0;
  };
  static void push(Cycle& slot, Cycle v) { slot = std::max(slot, v); }
  Cycle& bank(int b, Command c) { return bank_[b * kCommandKinds + static_cast<int>(c)]; }
  Cycle& group(int r, int g, Command c) {
    return group_[(r * bankgroups_ + g) * kCommandKinds + static_cast<int>(c)];
  }
  Cycle& rank(int r, Command c) { return rank_[r * kCommandKinds + static_cast<int>(c)]; }

  Timing t_;
  int ranks_, bankgroups_;
  std::vector<Cycle> bank_, group_, rank_;
  std::vector<Faw> faw_;
};

struct RefEntry {
  std::int64_t row = 0;
  int requester = 0;
  Cycle arrival = 0;
  int flat_bank = 0, rank = 0, group = 0;
  bool is_write = false;
  std::uint64_t seq = 0;  // arrival order in the channel (set by enqueue)
};

}  // namespace

class ReferenceChannel {
 public:
  ReferenceChannel(const DramSpec& spec, int channel, std::vector<IssuedCommand>& log)
      : spec_(spec),
        channel_(channel),
        log_(log),
        banks_per_rank_(spec.org.banks_per_rank()),
        refresh_interval_(spec.ctrl.refresh == RefreshMode::AllBank ? spec.t.tREFI
                          : spec.t.tREFIpb > 0                      ? spec.t.tREFIpb
                                               : spec.t.tREFI / spec.org.banks_per_rank()),
        scheduler_(make_scheduler(spec.ctrl, "reference")),
        hit_cap_(scheduler_->row_hit_cap()),
        timing_(spec.org, spec.t),
        banks_(spec.org.banks_per_channel()),
        open_in_rank_(spec.org.ranks, 0),
        refresh_due_(spec.org.ranks),
        refresh_bank_(spec.org.ranks, 0) {
    for (int r = 0; r < spec.org.ranks; ++r)
      refresh_due_[r] = refresh_interval_ + r * refresh_interval_ / spec.org.ranks;
  }

  std::size_t capacity(bool w) const {
    return static_cast<std::size_t>(w ? spec_.ctrl.write_queue : spec_.ctrl.read_queue);
  }
  std::size_t free_entries(bool w) const {
    const std::size_t used = (w ? writes_ : reads_).size();
    return used >= capacity(w) ? 0 : capacity(w) - used;
  }
  bool idle() const { return reads_.empty() && writes_.empty(); }

  void enqueue(const RefEntry& e) {
    if (idle()) catch_up(e.arrival);
    floor_ = std::max(floor_, e.arrival);
    (e.is_write ? writes_ : reads_).push_back(Queued{e, 0});
    (e.is_write ? writes_ : reads_).back().e.seq = next_seq_++;
    decided_ = false;
  }
  Cycle next_cycle() {
    if (idle()) return kNoCycle;
    if (!decided_) decide();
    return decision_.cycle;
  }
  // Returns whether the command was a column command.
  bool issue() {
    if (!decided_) decide();
    const Decision d = decision_;
    FUSIM_ASSERT(d.cycle != kNoCycle, "reference issue() with nothing to issue");
    decided_ = false;
    execute(d);
    if (d.entry >= 0 && (d.cmd == Command::RD || d.cmd == Command::WR)) {
      auto& q = d.queue ? writes_ : reads_;
      q.erase(q.begin() + d.entry);
      return true;
    }
    return false;
  }
  void catch_up(Cycle until) {
    for (;;) {
      decide();
      if (decision_.cycle >= until) break;
      execute(decision_);
    }
    decided_ = false;
  }

 private:
  struct Queued {
    RefEntry e;
    int outcome;  // 0 undecided, 1 hit, 2 miss, 3 conflict
  };
  struct Bank {
    std::int64_t open_row = -1;
    Cycle last_column = 0;
    int accesses = 0;
    bool close_flag = false;
    int commit_queue = -1;  // the request the row was activated for: its queue and seq
    std::uint64_t commit_seq = 0;
  };
  struct Decision {
    Cycle cycle = kNoCycle;
    Command cmd = Command::ACT;
    int rank = 0, group = 0, bank = 0;
    std::int64_t row = -1;
    int entry = -1;
    int queue = 0;
  };
  int group_of(int b) const { return (b % banks_per_rank_) / spec_.org.banks_per_group; }

  void decide() {
    decided_ = true;
    const Cycle base = std::max(last_command_ + 1, floor_);
    const std::size_t high = static_cast<std::size_t>(spec_.ctrl.write_high_watermark);
    const std::size_t low_mark = static_cast<std::size_t>(spec_.ctrl.write_low_watermark);
    if (write_mode_) {
      if (writes_.empty() || (!reads_.empty() && writes_.size() <= low_mark)) write_mode_ = false;
    } else if (writes_.size() >= high || (reads_.empty() && !writes_.empty())) {
      write_mode_ = true;
    }
    const bool all_bank = spec_.ctrl.refresh == RefreshMode::AllBank;
    Decision best;
    // Refresh: due precharges first, then the refresh itself.
    for (int r = 0; r < static_cast<int>(refresh_due_.size()); ++r) {
      const Cycle low = std::max(base, refresh_due_[r]);
      if (low >= best.cycle) continue;
      Decision d;
      d.rank = r;
      if (all_bank) {
        if (open_in_rank_[r] > 0) {
          for (int b = r * banks_per_rank_; b < (r + 1) * banks_per_rank_; ++b) {
            if (banks_[b].open_row < 0) continue;
            const Cycle e = std::max(low, timing_.earliest(Command::PRE, r, group_of(b), b));
            if (e < d.cycle) d.cycle = e, d.cmd = Command::PRE, d.group = group_of(b), d.bank = b;
          }
        } else {
          d.cmd = Command::REFab;
          d.cycle = std::max(low, timing_.earliest(Command::REFab, r, 0, 0));
        }
      } else {
        const int b = r * banks_per_rank_ + refresh_bank_[r];
        d.bank = b;
        d.group = group_of(b);
        d.cmd = banks_[b].open_row >= 0 ? Command::PRE : Command::REFpb;
        d.cycle = std::max(low, timing_.earliest(d.cmd, r, d.group, b));
      }
      if (d.cycle < best.cycle) best = d;
    }
    const Decision refresh = best;

    // Requests of the active queue.
    const int active = write_mode_ ? 1 : 0;
    const auto& q = write_mode_ ? writes_ : reads_;
    auto committed_other = [&](int bank) {
      return banks_[bank].commit_queue >= 0 && banks_[bank].commit_queue != active;
    };
    auto refresh_blocks = [&](Cycle ready, int rank, int bank) {
      return ready >= refresh_due_[rank] &&
             (all_bank || bank == rank * banks_per_rank_ + refresh_bank_[rank]);
    };
    std::vector<bool> hit_mark(banks_.size(), false), conflict_mark(banks_.size(), false);
    for (const Queued& x : q) {
      const Bank& b = banks_[x.e.flat_bank];
      if (b.open_row == x.e.row)
        hit_mark[x.e.flat_bank] = true;
      else if (b.open_row >= 0)
        conflict_mark[x.e.flat_bank] = true;
    }
    auto capped = [&](int bank) {
      const Bank& b = banks_[bank];
      if (spec_.ctrl.row_policy == RowPolicy::OpenCap && b.accesses >= spec_.ctrl.row_cap)
        return true;
      return hit_cap_ > 0 && b.accesses >= hit_cap_ && conflict_mark[bank];
    };
    std::vector<Candidate> candidates;
    std::vector<int> entry_of;
    std::vector<Command> cmd_of;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const RefEntry& e = q[i].e;
      const Bank& b = banks_[e.flat_bank];
      Command cmd;
      bool hit = false;
      if (b.open_row < 0) {
        cmd = Command::ACT;
      } else if (b.open_row == e.row && !capped(e.flat_bank)) {
        cmd = e.is_write ? Command::WR : Command::RD;
        hit = true;
      } else {
        if (hit_mark[e.flat_bank] && !capped(e.flat_bank)) continue;  // never close a hit
        if (committed_other(e.flat_bank)) continue;  // its request of the other queue first
        cmd = Command::PRE;
      }
      const Cycle ready =
          std::max({base, e.arrival, timing_.earliest(cmd, e.rank, e.group, e.flat_bank)});
      if (refresh_blocks(ready, e.rank, e.flat_bank)) {
        continue;  // a due refresh blocks its rank (all-bank) or its bank (per-bank)
      }
      candidates.push_back(Candidate{ready, e.arrival, e.requester, hit});
      entry_of.push_back(static_cast<int>(i));
      cmd_of.push_back(cmd);
    }
    Decision request;
    if (!candidates.empty()) {
      const std::size_t k = scheduler_->pick(candidates.data(), candidates.size());
      const RefEntry& e = q[entry_of[k]].e;
      request.cycle = candidates[k].ready;
      request.cmd = cmd_of[k];
      request.rank = e.rank;
      request.group = e.group;
      request.bank = e.flat_bank;
      request.row = e.row;
      request.entry = entry_of[k];
      request.queue = active;
    }

    // Column commands of the other queue's requests whose rows were activated for them.
    Decision committed;
    std::uint64_t committed_seq = 0;
    for (int bank = 0; bank < static_cast<int>(banks_.size()); ++bank) {
      if (!committed_other(bank)) continue;
      const int cq = banks_[bank].commit_queue;
      const auto& other = cq ? writes_ : reads_;
      std::size_t i = 0;
      while (other[i].e.seq != banks_[bank].commit_seq) ++i;
      const RefEntry& e = other[i].e;
      const Command cmd = cq ? Command::WR : Command::RD;
      const Cycle ready =
          std::max({base, e.arrival, timing_.earliest(cmd, e.rank, e.group, e.flat_bank)});
      if (refresh_blocks(ready, e.rank, e.flat_bank)) continue;
      if (ready < committed.cycle || (ready == committed.cycle && e.seq < committed_seq)) {
        committed.cycle = ready, committed.cmd = cmd, committed.rank = e.rank;
        committed.group = e.group, committed.bank = e.flat_bank, committed.row = e.row;
        committed.entry = static_cast<int>(i), committed.queue = cq;
        committed_seq = e.seq;
      }
    }

    // Row-policy precharges.
    Decision close;
    for (const int bank : closable_) {
      const Bank& b = banks_[bank];
      if (b.open_row < 0) continue;
      if (hit_mark[bank] && !capped(bank)) continue;
      if (committed_other(bank)) continue;
      const int r = bank / banks_per_rank_;
      const int g = group_of(bank);
      Cycle ready = std::max(base, timing_.earliest(Command::PRE, r, g, bank));
      if (spec_.ctrl.row_policy == RowPolicy::OpenTimeout)
        ready = std::max(ready, b.last_column + spec_.ctrl.row_timeout);
      if (ready < close.cycle) {
        close.cycle = ready, close.cmd = Command::PRE, close.rank = r, close.group = g;
        close.bank = bank;
      }
    }
    // Refresh wins ties, then committed columns, then requests, then policy closes.
    decision_ = refresh;
    if (committed.cycle < decision_.cycle) decision_ = committed;
    if (request.cycle < decision_.cycle) decision_ = request;
    if (close.cycle < decision_.cycle) decision_ = close;
  }

  void close_bank(int bank) {
    Bank& b = banks_[bank];
    b.open_row = -1;
    b.accesses = 0;
    b.commit_queue = -1;
    --open_in_rank_[bank / banks_per_rank_];
    if (b.close_flag) {
      b.close_flag = false;
      closable_.erase(std::find(closable_.begin(), closable_.end(), bank));
    }
  }

  void execute(const Decision& d) {
    timing_.issue(d.cmd, d.rank, d.group, d.bank, d.cycle);
    last_command_ = d.cycle;
    IssuedCommand c;
    c.cycle = d.cycle;
    c.command = d.cmd;
    c.channel = channel_;
    c.rank = d.rank;
    c.bankgroup = d.group;
    c.bank = (d.bank % banks_per_rank_) % spec_.org.banks_per_group;
    c.row = d.cmd == Command::ACT                          ? d.row
            : d.cmd == Command::RD || d.cmd == Command::WR ? banks_[d.bank].open_row
                                                           : -1;
    log_.push_back(c);
    Queued* x = d.entry >= 0 ? &(d.queue ? writes_ : reads_)[d.entry] : nullptr;
    Bank& b = banks_[d.bank];
    switch (d.cmd) {
      case Command::ACT:
        b.open_row = d.row;
        b.accesses = 0;
        ++open_in_rank_[d.rank];
        if (x && x->outcome == 0) x->outcome = 2;
        if (x) b.commit_queue = d.queue, b.commit_seq = x->e.seq;
        break;
      case Command::PRE:
        close_bank(d.bank);
        if (x && x->outcome == 0) x->outcome = 3;
        break;
      case Command::RD:
      case Command::WR: {
        if (x->outcome == 0) x->outcome = 1;
        if (b.commit_queue == d.queue && b.commit_seq == x->e.seq) b.commit_queue = -1;
        ++b.accesses;
        b.last_column = d.cycle;
        scheduler_->on_column(x->e.requester, x->outcome == 1, x->e.arrival, d.cycle);
        const RowPolicy p = spec_.ctrl.row_policy;
        const bool want_close = p == RowPolicy::Closed || p == RowPolicy::OpenTimeout ||
                                (p == RowPolicy::OpenCap && b.accesses >= spec_.ctrl.row_cap);
        if (want_close && !b.close_flag) {
          b.close_flag = true;
          closable_.push_back(d.bank);
        }
        break;
      }
      case Command::REFab:
        refresh_due_[d.rank] += refresh_interval_;
        break;
      case Command::REFpb:
        refresh_bank_[d.rank] = (refresh_bank_[d.rank] + 1) % banks_per_rank_;
        refresh_due_[d.rank] += refresh_interval_;
        break;
    }
  }

  const DramSpec& spec_;
  const int channel_;
  std::vector<IssuedCommand>& log_;
  const int banks_per_rank_;
  const Cycle refresh_interval_;
  std::unique_ptr<Scheduler> scheduler_;
  const int hit_cap_;
  RefTiming timing_;
  std::vector<Bank> banks_;
  std::vector<int> open_in_rank_;
  std::vector<Cycle> refresh_due_;
  std::vector<int> refresh_bank_;
  std::vector<int> closable_;
  std::vector<Queued> reads_, writes_;
  bool write_mode_ = false;
  std::uint64_t next_seq_ = 0;
  Cycle last_command_ = -1;
  Cycle floor_ = 0;
  bool decided_ = false;
  Decision decision_;
};

ReferenceDram::ReferenceDram(const DramSpec& spec)
    : spec_(spec), mapping_(spec_), log_(spec.org.logical_channels()) {
  for (int c = 0; c < spec.org.logical_channels(); ++c)
    channels_.push_back(std::make_unique<ReferenceChannel>(spec_, c, log_[c]));
}

ReferenceDram::~ReferenceDram() = default;

bool ReferenceDram::will_accept(mem::Addr addr, std::uint32_t bytes, bool is_write) const {
  const auto atom = static_cast<std::uint32_t>(spec_.org.atom_bytes());
  const std::uint32_t atoms = bytes <= atom ? 1 : (bytes + atom - 1) / atom;
  std::vector<std::size_t> need(channels_.size(), 0);
  for (std::uint32_t i = 0; i < atoms; ++i)
    ++need[mapping_.decode(addr + std::uint64_t{i} * atom).channel];
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    if (need[c] == 0) continue;
    const ReferenceChannel& ch = *channels_[c];
    const std::size_t free = ch.free_entries(is_write);
    // A block with more atoms for a channel than its queue holds waits for the empty queue.
    if (atoms == 1 ? free == 0 : need[c] > free && free != ch.capacity(is_write)) return false;
  }
  return true;
}

void ReferenceDram::send(mem::Addr addr, std::uint32_t bytes, bool is_write, int requester,
                         Cycle now) {
  const auto atom = static_cast<std::uint32_t>(spec_.org.atom_bytes());
  const std::uint32_t atoms = bytes <= atom ? 1 : (bytes + atom - 1) / atom;
  for (std::uint32_t i = 0; i < atoms; ++i) {
    const DramAddress a = mapping_.decode(addr + std::uint64_t{i} * atom);
    RefEntry e;
    e.row = a.row;
    e.requester = requester;
    e.arrival = now;
    e.flat_bank = a.flat_bank;
    e.rank = a.rank;
    e.group = a.bankgroup;
    e.is_write = is_write;
    channels_[a.channel]->enqueue(e);
    // The decision is part of the model: DramSystem asks for the channel's next command
    // after every atom it queues, and that decision may turn the write mode.
    channels_[a.channel]->next_cycle();
  }
}

bool ReferenceDram::issue_until(Cycle now) {
  bool column = false;
  for (auto& c : channels_) {
    while (c->next_cycle() <= now) column |= c->issue();
  }
  return column;
}

Cycle ReferenceDram::next_cycle() {
  Cycle next = kNoCycle;
  for (auto& c : channels_) next = std::min(next, c->next_cycle());
  return next;
}

void ReferenceDram::finish(Cycle until) {
  for (auto& c : channels_) {
    if (c->idle()) c->catch_up(until);
  }
}

std::vector<std::vector<IssuedCommand>> reference_replay(const DramSpec& spec,
                                                         const std::vector<TraceRequest>& trace,
                                                         Cycle end_cycle, std::uint32_t bytes) {
  ReferenceDram dram(spec);
  std::size_t next = 0;
  Cycle now = 0;
  for (;;) {
    // At `now`: the commands decided for it first, then the feeder, and again while a
    // column command at `now` frees room for the request it waits with.
    bool again = true;
    dram.issue_until(now);
    while (again) {
      while (next < trace.size() && trace[next].arrival <= now &&
             dram.will_accept(trace[next].addr, bytes, trace[next].is_write)) {
        dram.send(trace[next].addr, bytes, trace[next].is_write, 0, now);
        ++next;
      }
      again = dram.issue_until(now);
    }
    const Cycle arrival =
        next < trace.size() && trace[next].arrival > now ? trace[next].arrival : kNoCycle;
    const Cycle command = dram.next_cycle();
    if (next == trace.size() && command == kNoCycle) break;
    now = std::min(arrival, command);
    FUSIM_ASSERT(now != kNoCycle, "reference replay stuck with requests left");
  }
  dram.finish(end_cycle);
  return dram.per_channel();
}

std::string describe(const IssuedCommand& c) {
  return fmt::format("{} at cycle {} (rank {}, bank group {}, bank {}, row {})",
                     to_string(c.command), c.cycle, c.rank, c.bankgroup, c.bank, c.row);
}

std::string first_difference(const std::vector<std::vector<IssuedCommand>>& got,
                             const std::vector<std::vector<IssuedCommand>>& want) {
  auto same = [](const IssuedCommand& a, const IssuedCommand& b) {
    return a.cycle == b.cycle && a.command == b.command && a.rank == b.rank &&
           a.bankgroup == b.bankgroup && a.bank == b.bank && a.row == b.row;
  };
  if (got.size() != want.size())
    return fmt::format("{} channels, expected {}", got.size(), want.size());
  for (std::size_t ch = 0; ch < got.size(); ++ch) {
    const auto& g = got[ch];
    const auto& w = want[ch];
    for (std::size_t i = 0; i < std::max(g.size(), w.size()); ++i) {
      if (i < g.size() && i < w.size() && same(g[i], w[i])) continue;
      return fmt::format("channel {}, command #{}: issued {}, expected {}", ch, i,
                         i < g.size() ? describe(g[i]) : "nothing",
                         i < w.size() ? describe(w[i]) : "nothing");
    }
  }
  return {};
}

}  // namespace fusim::dram::testing
