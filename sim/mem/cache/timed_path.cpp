// The timed path of the hierarchy (see the contract in hierarchy.h): units of a range issue
// through the first level's port, queue at the ports of the levels they reach, hold MSHRs at
// every level while a memory miss is outstanding, and the range completes with its last unit.
// Hits never create events; an event is scheduled per memory request and once per
// kLookaheadCycles of issue (so concurrent ranges interleave in time order).
#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/int_math.h"
#include "mem/cache/timed_path.h"

namespace fusim::cache {
namespace {
constexpr std::uint64_t kPostedBit = std::uint64_t{1} << 63;  // ids of requests nobody waits for
constexpr Tick kLookaheadCycles = 64;
}  // namespace

TimedPath::TimedPath(Hierarchy& h) : h_(h) {
  for (int k = 0; k < h.levels(); ++k) {
    mshrs_used_.emplace_back(static_cast<std::size_t>(h.instances(k)), 0);
    ports_.emplace_back(static_cast<std::size_t>(h.instances(k)));
  }
  // MSHRs track lines of the first level (the line a core's miss asks for); a unit of
  // block fidelity stands for unit / line of them.
  line_bytes_ = static_cast<std::uint32_t>(h.level_config(0).line_bytes);
  unsent_per_core_.assign(static_cast<std::size_t>(h.cores()), 0);
  out_of_mshrs_.assign(static_cast<std::size_t>(h.cores()), 0);
  private_free_.assign(static_cast<std::size_t>(h.cores()), UINT32_MAX);
  for (int k = 0; k < h.levels(); ++k) {
    const LevelConfig& c = h.level_config(k);
    const auto total = static_cast<std::uint32_t>(c.mshrs);
    if (c.shared) {
      shared_free_ = std::min(shared_free_, total);
    } else {
      for (auto& f : private_free_) f = std::min(f, total);
    }
  }
}

void TimedPath::attach(EventQueue& queue, mem::MemoryPort& port) {
  queue_ = &queue;
  port_ = &port;
  port.set_completion([this](const mem::MemRequest& r, Tick done) { on_memory_done(r, done); });
  outgoing_.reset(static_cast<std::size_t>(port.destinations()) + 1);
  port.set_retry([this] { pump(); });
}

void TimedPath::post(const mem::MemRequest& request) {
  if (!attached()) return;  // counted in the hierarchy's MemoryTraffic only
  mem::MemRequest r = request;
  r.id = kPostedBit | next_id_++;
  enqueue(r);
}

void TimedPath::enqueue(const mem::MemRequest& request) {
  // A line waits for its destination. A block piece (more than a line) stands for lines
  // of several channels: it is sent in parts of a line (MemRequest::part_bytes), which a
  // DRAM system takes at once and lets into each channel's queue as the lines would go;
  // a memory that takes it whole only when it fits has it wait in order in a queue of its
  // own, the last one.
  mem::MemRequest r = request;
  if (r.bytes > line_bytes_) r.part_bytes = line_bytes_;
  const std::size_t d = r.bytes > line_bytes_ ? outgoing_.queues() - 1
                                              : static_cast<std::size_t>(port_->destination(r));
  if (outgoing_.empty(d) && port_->will_accept(r)) {
    send(r);
    return;
  }
  outgoing_.push(d, r);
  port_->request_retry();
}

void TimedPath::send(const mem::MemRequest& r) {
  if (r.id & kPostedBit) ++posted_in_flight_;
  port_->send(r);
}

void TimedPath::pump() {
  outgoing_.drain(*port_, [this](const mem::MemRequest& r) { send(r); });
  // Refused: pump() runs again when room frees (the port's retry, set in attach).
  if (outgoing_.size() != 0) port_->request_retry();
}

std::uint32_t& TimedPath::mshrs_used(int level, int core) {
  return mshrs_used_[static_cast<std::size_t>(level)]
                    [h_.level_config(level).shared ? 0 : static_cast<std::size_t>(core)];
}

std::uint32_t TimedPath::free_mshr_lines(int core) const {
  return std::min(private_free_[static_cast<std::size_t>(core)], shared_free_);
}

bool TimedPath::unsent_lines_of(int core) const {
  return unsent_per_core_[static_cast<std::size_t>(core)] != 0;
}

bool TimedPath::send_piece(std::uint32_t u, Tick issue, Tick* sent_at) {
  UnitMiss& m = unit_misses_[u];
  std::uint32_t n = std::min(m.lines - m.sent_lines, free_mshr_lines(m.core));
  if (n == 0) return false;
  take_mshrs(m.core, static_cast<int>(n));
  // The piece's lines pass the ports of the levels below the first when they issue, as the
  // line misses they stand for would: a block does not take the ports for all its lines at
  // its first piece (a slot its later pieces, waiting for MSHRs, would not use then), and
  // its later pieces queue behind what other cores put there meanwhile.
  Tick delay = 0;
  for (int k = 1; k < h_.levels(); ++k) {
    Tick arrival = issue + h_.hit_latency(k - 1) + delay;
    delay += through_port(k, m.core, arrival, n) - arrival;
  }
  const Tick when = issue + h_.miss_issue_latency() + delay;
  if (sent_at) *sent_at = when;
  mem::MemRequest piece = m.request;
  piece.addr += static_cast<std::uint64_t>(m.sent_lines) * line_bytes_;
  piece.bytes = std::min(n * line_bytes_, m.request.bytes - m.sent_lines * line_bytes_);
  piece.id = next_id_++;
  // The same lines of each victim leave now, as the piece's lines issue (in line fidelity
  // a line miss posts its victim's writeback when it issues): a block's writeback reaches
  // memory spread over its fill like the line writebacks it stands for, not as one burst.
  for (int i = 0; i < m.writeback_count; ++i) {
    mem::MemRequest wb = m.writebacks[static_cast<std::size_t>(i)];
    wb.addr += static_cast<std::uint64_t>(m.sent_lines) * line_bytes_;
    wb.bytes = std::min(n * line_bytes_, wb.bytes - m.sent_lines * line_bytes_);
    post(wb);
  }
  m.sent_lines += n;
  ++m.pieces_in_flight;
  waiting_.emplace(piece.id, Miss{m.slot, m.core, n, u});
  queue_->schedule(when, Priority::Memory, [this, piece] { enqueue(piece); });
  return m.sent_lines == m.lines;
}

void TimedPath::take_mshrs(int core, int delta) {
  // (The free lines of the core's private levels and of the shared ones are worked out
  // here, where MSHRs move, rather than at every ask: free_mshr_lines is asked for every
  // unit issued and by every parked range at every freed MSHR, and its loop over the
  // levels was a tenth of a block run under perf.)
  std::uint32_t private_free = UINT32_MAX, shared_free = UINT32_MAX;
  for (int k = 0; k < h_.levels(); ++k) {
    std::uint32_t& used = mshrs_used(k, core);
    used += static_cast<std::uint32_t>(delta);
    const auto total = static_cast<std::uint32_t>(h_.level_config(k).mshrs);
    std::uint32_t& free = h_.level_config(k).shared ? shared_free : private_free;
    free = std::min(free, used >= total ? 0 : total - used);
  }
  private_free_[static_cast<std::size_t>(core)] = private_free;
  shared_free_ = shared_free;
}

PortCalendar& TimedPath::port(int level, int core) {
  return ports_[static_cast<std::size_t>(level)]
               [h_.level_config(level).shared ? 0 : static_cast<std::size_t>(core)];
}

Tick TimedPath::through_port(int level, int core, Tick arrival) {
  return port(level, core).book(arrival, h_.port_occupancy(level), queue_->now());
}

Tick TimedPath::through_port(int level, int core, Tick arrival, std::uint32_t lines) {
  if (static_cast<std::uint64_t>(lines) * line_bytes_ == h_.unit_bytes())
    return through_port(level, core, arrival);
  // As Hierarchy::port_occupancy is for a whole unit (LevelConfig::port_time).
  const Tick occupancy = h_.level_config(level).port_time(lines);
  return port(level, core).book(arrival, occupancy, queue_->now());
}

void TimedPath::start(int core, std::uint64_t first, std::uint64_t end, bool whole_first,
                      bool whole_last, AccessKind kind, Done done) {
  FUSIM_ASSERT(attached(), "Hierarchy::start_range needs attach_memory() first");
  FUSIM_ASSERT(core >= 0 && core < h_.cores(), fmt::format("core {} out of range", core));
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& x = transfers_[slot];
  x = Transfer{};
  x.core = core;
  x.first = x.next = first;
  x.end = end;
  x.whole_first = whole_first;
  x.whole_last = whole_last;
  x.kind = kind;
  x.cursor = x.finish = queue_->now();
  x.active = true;
  x.done = std::move(done);
  advance(slot);
}

void TimedPath::advance(std::uint32_t slot) {
  const Tick now = queue_->now();
  const Tick horizon = now + kLookaheadCycles * h_.level_config(0).clock_period;
  const int n = h_.levels();
  Transfer* x = &transfers_[slot];
  x->parked = false;
  while (x->next < x->end && !x->blocked) {
    const int core = x->core;
    const std::uint64_t unit = x->next;
    Tick t = std::max(x->cursor, now);
    t = std::max(t, port(0, core).free_at());
    if (t > horizon) {
      x->cursor = t;
      queue_->schedule(t, Priority::Memory, [this, slot] { advance(slot); });
      return;
    }
    // A miss needs a free MSHR line, and waits behind lines of earlier misses of its core
    // that are still waiting for one.
    // (The tag check of every level runs only when MSHRs are short, and not again for the
    // unit a range parked at while no fill since was of it: every freed MSHR resumes every parked
    // range, and that check was 10% of a block run.)
    if ((free_mshr_lines(core) == 0 || unsent_lines_of(core)) &&
        x->kind != AccessKind::StreamingWrite &&
        ((x->parked_unit == unit && !h_.maybe_filled_since(unit, x->parked_fills)) ||
         h_.misses_everywhere(core, unit))) {
      x->cursor = t;
      x->parked = true;
      x->parked_unit = unit;
      x->parked_fills = h_.fills();
      parked_.push_back(slot);
      return;
    }
    t = through_port(0, core, t);
    x->cursor = t;
    CapturedRequests captured;
    const bool whole =
        (unit != x->first || x->whole_first) && (unit + 1 != x->end || x->whole_last);
    const int served = h_.access_captured(core, unit, x->kind, whole, captured);
    ++x->next;
    bool has_read = false;
    for (int i = 0; i < captured.count; ++i)
      has_read = has_read || !captured.requests[static_cast<std::size_t>(i)].is_write;
    // Walk down the levels the unit reached, queueing at each port after the lookups above;
    // a miss of every level walks them piece by piece (send_piece).
    int deepest = std::min(served, n - 1);
    Tick delay = 0;
    const bool by_piece = served == n && has_read;
    for (int k = 1; k <= deepest && !by_piece; ++k) {
      Tick arrival = t + h_.hit_latency(k - 1) + delay;
      delay += through_port(k, core, arrival) - arrival;
    }
    if (!has_read)  // no fill to pace them: the victims leave at once
      for (int i = 0; i < captured.writeback_count; ++i)
        post(captured.writebacks[static_cast<std::size_t>(i)]);
    if (captured.count == 0) {
      x->finish = std::max(x->finish, t + h_.hit_latency(deepest) + delay);
      continue;
    }
    Tick send_at = t + h_.miss_issue_latency() + delay;
    bool read_pending = true;  // the first read is the miss (it holds the MSHRs)
    for (int i = 0; i < captured.count; ++i) {
      mem::MemRequest r = captured.requests[static_cast<std::size_t>(i)];
      ++x->outstanding;
      if (!r.is_write && read_pending) {
        read_pending = false;
        std::uint32_t u;
        if (!free_unit_misses_.empty()) {
          u = free_unit_misses_.back();
          free_unit_misses_.pop_back();
        } else {
          u = static_cast<std::uint32_t>(unit_misses_.size());
          unit_misses_.emplace_back();
        }
        UnitMiss& m = unit_misses_[u];
        m = UnitMiss{};
        m.slot = slot;
        m.core = core;
        m.request = r;
        m.lines = std::max<std::uint32_t>(1, ceil_div(r.bytes, line_bytes_));
        m.writebacks = captured.writebacks;
        m.writeback_count = captured.writeback_count;
        if (!send_piece(u, t, &send_at)) {  // send_at: the direct writes' too
          unsent_.push_back(u);
          ++unsent_per_core_[static_cast<std::size_t>(core)];
          x->blocked = true;
        }
        continue;
      }
      // A direct write (write-around, streaming) is waited for but holds no MSHR.
      r.id = next_id_++;
      waiting_.emplace(r.id, Miss{slot, core, 0, kNoUnit});
      queue_->schedule(send_at, Priority::Memory, [this, r] { enqueue(r); });
    }
  }
  maybe_complete(slot);
}

void TimedPath::maybe_complete(std::uint32_t slot) {
  Transfer& x = transfers_[slot];
  if (!x.active || x.completing || x.next < x.end || x.outstanding != 0) return;
  x.completing = true;
  Tick when = std::max(x.finish, queue_->now());
  queue_->schedule(when, Priority::Response, [this, slot] {
    Transfer& t = transfers_[slot];
    Done done = std::move(t.done);
    Tick finish = std::max(t.finish, queue_->now());
    t = Transfer{};
    free_slots_.push_back(slot);
    done(finish);
  });
}

void TimedPath::on_memory_done(const mem::MemRequest& request, Tick done) {
  if (request.id & kPostedBit) {
    FUSIM_ASSERT(posted_in_flight_ > 0, "completion of a posted request never sent");
    --posted_in_flight_;
    return;
  }
  auto it = waiting_.find(request.id);
  FUSIM_ASSERT(it != waiting_.end(),
               fmt::format("memory completed unknown request id {}", request.id));
  Miss miss = it->second;
  waiting_.erase(it);
  if (miss.lines > 0) take_mshrs(miss.core, -static_cast<int>(miss.lines));
  Transfer& x = transfers_[miss.slot];
  x.finish = std::max(x.finish, done);
  bool unit_done = true;
  if (miss.unit != kNoUnit) {
    UnitMiss& m = unit_misses_[miss.unit];
    --m.pieces_in_flight;
    unit_done = m.pieces_in_flight == 0 && m.sent_lines == m.lines;
    if (unit_done) free_unit_misses_.push_back(miss.unit);
  }
  if (unit_done) {
    --x.outstanding;
    maybe_complete(miss.slot);
  }
  if (miss.lines > 0) resume_after_free();
}

void TimedPath::resume_after_free() {
  // Lines already waiting go first, each sent a miss-issue latency after the MSHR frees (its
  // lookups run again, as a parked line miss does); then the ranges they held up, then
  // the ranges parked at a miss.
  // (Not re-entrant: advance() never frees an MSHR, so resume_ is free scratch here.)
  resume_.clear();
  const Tick issue = queue_->now();
  // Oldest first; a unit whose core has no MSHR line free does not hold up other cores'.
  // Sending only takes lines, so a core found without one stays so for the rest of the loop.
  std::fill(out_of_mshrs_.begin(), out_of_mshrs_.end(), 0);
  // With a shared level's MSHRs all taken no unit can send a line (send_piece would refuse
  // each, changing nothing): the walk over every core's waiting units is skipped.
  for (auto it = unsent_.begin(); shared_free_ != 0 && it != unsent_.end();) {
    std::uint32_t u = *it;
    const auto core = static_cast<std::size_t>(unit_misses_[u].core);
    if (out_of_mshrs_[core] || !send_piece(u, issue)) {
      out_of_mshrs_[core] = 1;
      ++it;
      continue;
    }
    it = unsent_.erase(it);
    --unsent_per_core_[core];
    transfers_[unit_misses_[u].slot].blocked = false;
    resume_.push_back(unit_misses_[u].slot);
  }
  if (!parked_.empty()) {
    resume_.insert(resume_.end(), parked_.begin(), parked_.end());
    parked_.clear();
  }
  for (std::size_t i = 0; i < resume_.size(); ++i) advance(resume_[i]);
}

bool TimedPath::busy() const {
  if (outgoing_.size() != 0 || !waiting_.empty() || posted_in_flight_ != 0) return true;
  for (const Transfer& x : transfers_)
    if (x.active) return true;
  return false;
}

std::string TimedPath::describe() const {
  std::string s;
  for (int k = 0; k < h_.levels(); ++k) {
    const LevelConfig& c = h_.level_config(k);
    const auto level = static_cast<std::size_t>(k);
    for (int i = 0; i < h_.instances(k); ++i) {
      const auto n = static_cast<std::size_t>(i);
      s += fmt::format("{}{}: {} lines valid, {}/{} MSHRs busy, port free at {} ps\n", c.name,
                       c.shared ? "" : fmt::format("[core{}]", i), h_.cache(k, i).occupancy(),
                       mshrs_used_[level][n], c.mshrs, ports_[level][n].free_at());
    }
  }
  s += fmt::format(
      "memory: {} requests waiting for the port, {} misses and {} posted writes in flight\n",
      outgoing_.size(), waiting_.size(), posted_in_flight_);
  for (std::size_t i = 0; i < transfers_.size(); ++i) {
    const Transfer& x = transfers_[i];
    if (!x.active) continue;
    s += fmt::format("range {}: core {}, {} units left, {} outstanding{}\n", i, x.core,
                     x.end - x.next, x.outstanding,
                     x.parked    ? ", stalled on MSHRs"
                     : x.blocked ? ", a unit's lines waiting for MSHRs"
                                 : "");
  }
  return s;
}

}  // namespace fusim::cache
