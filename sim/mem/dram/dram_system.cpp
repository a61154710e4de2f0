#include "mem/dram/dram_system.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/int_math.h"

namespace fusim::dram {

DramSystem::DramSystem(DramSpec spec, EventQueue& queue, const std::string& file)
    : spec_(std::move(spec)),
      queue_(queue),
      mapping_(spec_, file, "mapping"),
      clock_(spec_.clock()),
      atom_bytes_(static_cast<std::uint32_t>(spec_.org.atom_bytes())),
      atom_shift_((atom_bytes_ & (atom_bytes_ - 1)) == 0 ? __builtin_ctz(atom_bytes_) : -1) {
  const int n = spec_.org.logical_channels();
  stats_.tCK = spec_.tCK;
  stats_.bank_open_cycles.assign(static_cast<std::size_t>(n) * spec_.org.banks_per_channel(), 0);
  for (int c = 0; c < n; ++c) {
    channels_.push_back(
        std::make_unique<ChannelController>(spec_, c, make_scheduler(spec_.ctrl, file), stats_));
  }
  channel_atoms_.assign(n, 0);
  parts_.resize(n);
  parts_cleared_.assign(n, 0);
  part_count_.assign(n, 0);
  head_refused_.assign(n, Refusal{});
  wake_ = make_wake_policy(wake_mode_, *this, queue_);
}

DramSystem::~DramSystem() = default;

void DramSystem::set_wake_mode(WakeMode mode) {
  FUSIM_ASSERT(live_ == 0 && queue_.empty() && queue_.now() == 0,
               "DramSystem::set_wake_mode on a system in use");
  wake_mode_ = mode;
  wake_ = make_wake_policy(mode, *this, queue_);
}

bool DramSystem::direct_replay_ok() const {
  return queue_.empty() && queue_.now() == 0 && live_ == 0 && !completion_ && !retry_ &&
         wake_mode_ == WakeMode::PerChannel;
}

void DramSystem::channels_of(const mem::MemRequest& r, std::vector<int>& out) const {
  out.clear();
  if (atoms_of(r) == 1) {
    out.push_back(mapping_.channel_of(r.addr));
  } else {
    for (const auto& pc : plan(r).per_channel) out.push_back(pc.first);
  }
}

void DramSystem::set_command_observer(CommandObserver observer) {
  observer_ = std::move(observer);
  for (auto& c : channels_) c->set_observer(observer_ ? &observer_ : nullptr);
}

std::uint32_t DramSystem::atoms_of(const mem::MemRequest& r) const {
  if (r.bytes <= atom_bytes_) return 1;
  // (A shift where the atom is a power of two, as on every preset: a division per ask of
  // a multi-atom request was a tenth of an HBM replay.)
  return atom_shift_ >= 0 ? (r.bytes + atom_bytes_ - 1) >> atom_shift_
                          : ceil_div(r.bytes, atom_bytes_);
}

void DramSystem::decode_atoms(mem::Addr addr, std::uint32_t bytes,
                              std::vector<DramAddress>& out) const {
  mem::MemRequest r;
  r.addr = addr;
  r.bytes = bytes;
  const std::uint32_t atoms = atoms_of(r);
  out.resize(atoms);
  const mem::Addr unit_mask = ~(mapping_.unit_bytes() - 1);  // (a power of two)
  for (std::uint32_t i = 0; i < atoms; ++i) {
    const mem::Addr at = addr + std::uint64_t{i} * atom_bytes_;
    // The next atom of the same interleave unit: the same channel, bank and row, the next
    // column (a 64-byte line of 32-byte HBM atoms is decoded once).
    if (i > 0 && (at & unit_mask) == ((at - atom_bytes_) & unit_mask)) {
      out[i] = out[i - 1];
      ++out[i].column;
    } else {
      out[i] = mapping_.decode(at);
    }
  }
}

const DramSystem::BlockPlan& DramSystem::plan(const mem::MemRequest& r) const {
  if (plan_.valid && plan_.addr == r.addr && plan_.bytes == r.bytes) return plan_;
  plan_.valid = true;
  plan_.addr = r.addr;
  plan_.bytes = r.bytes;
  plan_.per_channel.clear();
  decode_atoms(r.addr, r.bytes, plan_.atoms);
  for (const DramAddress& a : plan_.atoms) {
    if (channel_atoms_[a.channel]++ == 0) plan_.per_channel.emplace_back(a.channel, 0);
  }
  for (auto& [channel, count] : plan_.per_channel) {
    count = channel_atoms_[channel];
    channel_atoms_[channel] = 0;
  }
  return plan_;
}

int DramSystem::refused_by(const mem::MemRequest& request) const {
  if (divisible(request)) return -1;  // its parts wait here if need be
  const std::uint32_t atoms = atoms_of(request);
  if (atoms == 1) {
    const int ch = mapping_.channel_of(request.addr);
    if (!channels_[ch]->has_room(request.is_write)) return ch;
    return parts_waiting_ != 0 && !parts_[ch].empty() ? ch : -1;
  }
  if (parts_waiting_ != 0) {  // behind the parts waiting for its first channel
    const int first = mapping_.channel_of(request.addr);
    if (!parts_[first].empty()) return first;
  }
  // Room for every atom, counted per channel. A block with more atoms for one channel
  // than its queue holds (a 4 KiB block on one channel: 64 atoms, 32 entries) could never
  // fit; it is admitted whole once that queue is empty, else block fidelity would wait
  // forever on a narrow memory.
  const auto room = [&](int channel, std::uint32_t count) {
    const auto& c = *channels_[channel];
    const std::size_t free = c.free_entries(request.is_write);
    return count <= free || free == c.capacity(request.is_write);
  };
  if (atoms > kFewAtoms) {
    for (const auto& [channel, count] : plan(request).per_channel) {
      if (!room(channel, count)) return channel;
    }
    return -1;
  }
  // A line of a few atoms (HBM's 128 B lines of 32 B atoms) is counted from its interleave
  // units' channels, without decoding it into the one cached plan: a sender asks about the
  // refused head of every channel's FIFO in turn, and decoding each anew was half of the
  // curve probe's time on the H100's 80 pseudo-channels (perf).
  int channel[kFewAtoms];
  std::uint32_t count[kFewAtoms];
  int n = 0, k = 0;
  const mem::Addr unit_mask = ~(mapping_.unit_bytes() - 1);
  mem::Addr unit = ~mem::Addr{0};
  for (std::uint32_t i = 0; i < atoms; ++i) {
    const mem::Addr at = request.addr + std::uint64_t{i} * atom_bytes_;
    if ((at & unit_mask) != unit) {
      unit = at & unit_mask;
      const int ch = mapping_.channel_of(at);
      for (k = 0; k < n && channel[k] != ch; ++k) {
      }
      if (k == n) channel[n] = ch, count[n++] = 0;
    }
    ++count[k];
  }
  for (int j = 0; j < n; ++j) {
    if (!room(channel[j], count[j])) return channel[j];
  }
  return -1;
}

void DramSystem::send_at(const mem::MemRequest& request, Tick at, WakePolicy& wake) {
  FUSIM_ASSERT(request.requester >= 0, "MemRequest::requester must be >= 0");
  const std::uint32_t atoms = atoms_of(request);
  std::uint32_t token;
  if (free_slot_ != UINT32_MAX) {
    token = free_slot_;
    free_slot_ = slots_[token].next_free;
  } else {
    token = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  ++live_;
  // A request is seen by the controller at the first clock edge at or after it arrives.
  // (ceil(at / period): next_edge(at) / period in one division.)
  const Cycle arrival = (at + clock_.period() - 1) / clock_.period();
  Slot& slot = slots_[token];
  slot.request = request;
  slot.arrival = arrival;
  slot.done = 0;
  slot.atoms_left = atoms;
  if (divisible(request)) {
    send_parts(request, token, arrival, at, wake);
    return;
  }
  // (decode() builds `single` in place: assigned from a returned temporary, it was copied
  // in 16-byte loads of fields just stored one by one, which the store buffer cannot
  // forward: a fifth of send_at's samples under perf.)
  const DramAddress single = atoms == 1 ? mapping_.decode(request.addr) : DramAddress{};
  const DramAddress* const decoded = atoms == 1 ? &single : plan(request).atoms.data();
  FUSIM_ASSERT(atoms > 1 || channels_[single.channel]->has_room(request.is_write),
               "DramSystem::send without will_accept");
  enqueue_atoms(decoded, atoms, token, request, arrival, at, wake);
}

void DramSystem::enqueue_atoms(const DramAddress* atoms, std::uint32_t count, std::uint32_t token,
                               const mem::MemRequest& request, Cycle arrival, Tick at,
                               WakePolicy& wake) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const DramAddress& a = atoms[i];
    QueueEntry e;
    e.row = a.row;
    e.token = token;
    e.requester = request.requester;
    e.arrival = arrival;
    e.flat_bank = static_cast<std::uint16_t>(a.flat_bank);
    e.rank = static_cast<std::uint8_t>(a.rank);
    e.bankgroup = static_cast<std::uint8_t>(a.bankgroup);
    e.bank = static_cast<std::uint8_t>(a.bank);
    e.is_write = request.is_write;
    // (A block's atoms, or a part's, were counted against the room per channel: a block
    // larger than an empty queue may fill it past its capacity.)
    channels_[a.channel]->enqueue(e, /*whole_block=*/count > 1);
    wake.on_request(a.channel, at);
  }
}

int DramSystem::part_refused_by(mem::Addr addr, std::uint32_t bytes, bool is_write) const {
  // Room per channel as refused_by counts it (an empty queue takes a part larger than it),
  // from the channels of the part's interleave units: a waiting part is asked about after
  // every column command until it fits, and decoding its atoms at each ask was a tenth of
  // a block-fidelity run (perf); they are decoded once, when it is sent.
  if (bytes <= atom_bytes_) {  // one atom (a line of DDR): its channel alone
    const int channel = mapping_.channel_of(addr);
    const ChannelController& c = *channels_[channel];
    const std::size_t free = c.free_entries(is_write);
    return free != 0 || free == c.capacity(is_write) ? -1 : channel;
  }
  const mem::Addr unit_mask = ~(mapping_.unit_bytes() - 1);
  mem::Addr unit = ~mem::Addr{0};
  int channel = -1, refused = -1;
  const mem::Addr end = addr + bytes;
  for (mem::Addr at = addr; at < end; at += atom_bytes_) {
    if ((at & unit_mask) != unit) {
      unit = at & unit_mask;
      channel = mapping_.channel_of(at);
    }
    const ChannelController& c = *channels_[channel];
    const std::size_t free = c.free_entries(is_write);
    if (++part_count_[channel] > free && free != c.capacity(is_write) && refused < 0)
      refused = channel;
  }
  unit = ~mem::Addr{0};
  for (mem::Addr at = addr; at < end; at += atom_bytes_) {
    if ((at & unit_mask) != unit) {
      unit = at & unit_mask;
      part_count_[mapping_.channel_of(at)] = 0;
    }
  }
  return refused;
}

void DramSystem::send_parts(const mem::MemRequest& request, std::uint32_t token, Cycle arrival,
                            Tick at, WakePolicy& wake) {
  for (std::uint32_t offset = 0; offset < request.bytes; offset += request.part_bytes) {
    const Part p{request.addr + offset, std::min(request.part_bytes, request.bytes - offset),
                 token};
    const bool fits = part_refused_by(p.addr, p.bytes, request.is_write) < 0;
    const int first = mapping_.channel_of(p.addr);
    if (fits && parts_[first].empty()) {
      decode_atoms(p.addr, p.bytes, part_atoms_);
      enqueue_atoms(part_atoms_.data(), static_cast<std::uint32_t>(part_atoms_.size()), token,
                    request, arrival, at, wake);
      continue;
    }
    if (parts_[first].empty()) part_channels_.push_back(first);
    parts_[first].push_back(p);
    ++parts_waiting_;
  }
}

// The waiting parts' retry: each channel's FIFO, in the order they began to wait, sends its
// head while it fits (RefusedQueues::drain's rule).
void DramSystem::admit_parts() {
  admit_pending_ = false;
  const Tick at = queue_.now();
  const Cycle arrival = (at + clock_.period() - 1) / clock_.period();
  std::size_t keep = 0;
  for (const int ch : part_channels_) {
    std::deque<Part>& fifo = parts_[ch];
    Refusal& last = head_refused_[ch];
    while (!fifo.empty()) {
      const Part& p = fifo.front();
      const mem::MemRequest& r = slots_[p.token].request;
      // A head refused for want of room in a channel that has freed no entry since stays
      // refused (that channel's room only shrank), and is not counted again.
      if (last.channel >= 0 && channels_[last.channel]->freed() == last.freed) break;
      const int refused = part_refused_by(p.addr, p.bytes, r.is_write);
      if (refused >= 0) {
        last = Refusal{refused, channels_[refused]->freed()};
        break;
      }
      last = Refusal{};
      decode_atoms(p.addr, p.bytes, part_atoms_);
      enqueue_atoms(part_atoms_.data(), static_cast<std::uint32_t>(part_atoms_.size()), p.token, r,
                    arrival, at, *wake_);
      fifo.pop_front();
      --parts_waiting_;
    }
    if (fifo.empty())
      ++parts_cleared_[ch];
    else
      part_channels_[keep++] = ch;
  }
  part_channels_.resize(keep);
}

ColumnServed DramSystem::issue_next(int ch) {
  const ColumnServed s = channels_[ch]->issue();
  if (s.valid) served(s);
  return s;
}

void DramSystem::served(const ColumnServed& s) {
  Slot& slot = slots_[s.token];
  slot.done = std::max(slot.done, s.done);
  last_done_ = std::max(last_done_, s.done);
  const mem::MemRequest& r = slot.request;
  if (static_cast<std::size_t>(r.requester) >= stats_.requesters.size()) {
    stats_.requesters.resize(r.requester + 1);
  }
  RequesterStats& rs = stats_.requesters[r.requester];
  ++rs.accesses;
  rs.row_hits += s.row_hit ? 1 : 0;
  if (parts_waiting_ != 0 && !admit_pending_) {
    // An entry just freed: the waiting parts first (scheduled before the sender's retry).
    admit_pending_ = true;
    queue_.schedule(std::max(queue_.now(), clock_.cycles(s.issued)), Priority::Compute,
                    [this] { admit_parts(); });
  }
  if (retry_requested_ && retry_) {
    // A queue entry just freed: let the refused sender try again at this tick.
    retry_requested_ = false;
    queue_.schedule(std::max(queue_.now(), clock_.cycles(s.issued)), Priority::Compute,
                    [this] { retry_(); });
  }
  if (--slot.atoms_left != 0) return;
  const Cycle latency = slot.done - slot.arrival;
  if (r.is_write) {
    ++stats_.writes;
    stats_.write_bytes += r.bytes;
    stats_.write_latency.add(latency);
    ++rs.writes;
  } else {
    ++stats_.reads;
    stats_.read_bytes += r.bytes;
    stats_.read_latency.add(latency);
    ++rs.reads;
    rs.read_latency_cycles += latency;
  }
  rs.bytes += r.bytes;
  if (completion_) {
    const std::uint32_t token = s.token;
    queue_.schedule(clock_.cycles(slot.done), Priority::Response,
                    [this, token] { complete(token); });
  } else {
    complete(s.token);
  }
}

void DramSystem::complete(std::uint32_t token) {
  Slot& slot = slots_[token];
  --live_;
  if (completion_) {
    const mem::MemRequest r = slot.request;
    slot.next_free = free_slot_;
    free_slot_ = token;
    completion_(r, queue_.now());
    return;
  }
  slot.next_free = free_slot_;
  free_slot_ = token;
}

void DramSystem::finish() {
  const Cycle now = queue_.now() / clock_.period();
  for (auto& c : channels_) {
    if (c->idle()) c->catch_up(now);
  }
}

DramStats DramSystem::stats() const {
  DramStats s = stats_;
  s.elapsed = queue_.now();
  const Cycle now = queue_.now() / clock_.period();
  const std::size_t banks = static_cast<std::size_t>(spec_.org.banks_per_channel());
  for (std::size_t c = 0; c < channels_.size(); ++c)
    channels_[c]->add_open_cycles(now, s.bank_open_cycles, c * banks);
  return s;
}

std::unique_ptr<DramSystem> make_dram_system(const JsonView& dram_section, EventQueue& queue) {
  auto system =
      std::make_unique<DramSystem>(load_dram_spec(dram_section), queue, dram_section.file());
  system->set_wake_mode(WakeMode::Lookahead);
  return system;
}

}  // namespace fusim::dram
