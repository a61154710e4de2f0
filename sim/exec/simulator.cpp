#include "exec/simulator.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/units.h"

namespace fusim::exec {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Bytes of [0, total) that chunk `chunk` of `chunks` covers, on `unit` boundaries.
std::pair<std::int64_t, std::int64_t> chunk_slice(std::int64_t total, int chunk, int chunks,
                                                  std::int64_t unit) {
  std::int64_t lo = total * chunk / chunks / unit * unit;
  std::int64_t hi = chunk + 1 == chunks ? total : total * (chunk + 1) / chunks / unit * unit;
  return {lo, hi};
}

// Offsets in [0, total) of part `part` of `parts` of the range [addr, addr + total), cut at
// absolute multiples of `unit`: no unit is shared by two parts (chunks or cores), so each
// is looked up once and only the range's own first and last units can be partial. (Tensors
// are 512 B aligned: cut relative to the range, a 4 KiB block fidelity unit would straddle
// every cut.)
std::pair<std::int64_t, std::int64_t> aligned_slice(std::uint64_t addr, std::int64_t total,
                                                    std::int64_t part, std::int64_t parts,
                                                    std::int64_t unit) {
  const std::int64_t head = static_cast<std::int64_t>(addr % static_cast<std::uint64_t>(unit));
  // Whole units from the boundary at or below addr to the one at or above its end.
  const std::int64_t span = ceil_div(head + total, unit) * unit;
  auto cut = [&](std::int64_t p) {
    if (p == 0) return std::int64_t{0};
    if (p == parts) return total;
    return std::clamp(span * p / parts / unit * unit - head, std::int64_t{0}, total);
  };
  return {cut(part), cut(part + 1)};
}

// Bytes a pass streams through the hierarchy: every range once (re-reads are analytic).
std::int64_t first_read_bytes(const compute::ProgramPass& pass) {
  std::int64_t b = 0;
  for (const auto& r : pass.ranges) b += r.bytes;
  return b;
}
}  // namespace

Simulator::Simulator(const workload::Trace& trace, const schedule::Schedule& schedule,
                     const Machine& machine, const SimOptions& options)
    : trace_(trace),
      schedule_(schedule),
      machine_(machine),
      options_(options),
      gpu_(machine.kind == compute::UnitKind::Gpu) {
  cache::HierarchyConfig config = machine.caches;
  config.block_bytes = options.block_bytes;
  auto fidelity =
      options.fidelity == Fidelity::Line ? cache::Fidelity::Line : cache::Fidelity::Block;
  const int units = machine.compute.units;
  caches_ = std::make_unique<cache::Hierarchy>(config, fidelity, units);
  memory_ = make_main_memory(machine, queue_);
  tap_ = std::make_unique<MemoryTap>(queue_, *memory_, units, us(1));
  caches_->attach_memory(queue_, *tap_);
  for (const auto& level : config.levels) level_bytes_.push_back(level.size_bytes);
  reread_stats_.resize(config.levels.size());
  memory_bytes_per_ps_ = streaming_bytes_per_ps(machine);

  const auto& sops = schedule.ops;
  ops_.resize(sops.size());
  dependents_.resize(sops.size());
  // Lanes: GPU streams, or CPU core groups (stream s on group s mod groups).
  const int groups = gpu_ ? 0 : std::max(1, units / machine.compute.threads_per_op);
  int max_stream = 0;
  for (const auto& op : sops) max_stream = std::max(max_stream, op.stream);
  const int lanes = gpu_ ? max_stream + 1 : std::min(groups, max_stream + 1);
  lanes_.resize(static_cast<std::size_t>(lanes));
  lane_head_.assign(lanes_.size(), 0);
  lane_busy_.assign(lanes_.size(), false);
  Tick host = 0;  // GPU: the launching host thread, in issue order
  const Tick d = machine.compute.dispatch_overhead, L = machine.compute.launch_latency;
  for (std::size_t i = 0; i < sops.size(); ++i) {
    const auto& op = sops[i];
    FUSIM_ASSERT(op.id == static_cast<int>(i), "schedule op ids are their indices");
    OpState& s = ops_[i];
    s.remaining_deps = static_cast<int>(op.deps.size());
    for (int dep : op.deps) {
      FUSIM_ASSERT(dep >= 0 && dep < static_cast<int>(i),
                   fmt::format("op {} depends on op {} issued after it", i, dep));
      dependents_[static_cast<std::size_t>(dep)].push_back(static_cast<int>(i));
    }
    s.lane = gpu_ ? op.stream : op.stream % lanes;
    lanes_[static_cast<std::size_t>(s.lane)].push_back(static_cast<int>(i));
    if (gpu_ && op.kernels > 0) {
      s.earliest_start = host + d + L;
      host += op.kernels * d;
      s.earliest_end = host + L;
    }
  }
  if (gpu_) {
    sm_free_.assign(static_cast<std::size_t>(units), true);
    free_sms_ = units;
  }
  first_forward_ = schedule::step_openers(schedule);
  boundaries_.resize(first_forward_.size());
  boundary_taken_.assign(first_forward_.size(), false);
  progress_every_ = std::max<std::size_t>(1, sops.size() / 200);
}

Simulator::~Simulator() = default;

Simulator::Snapshot Simulator::snapshot() const {
  return {queue_.now(), tap_->total_bytes(), cache_stats()};
}

int Simulator::ready_lanes_waiting(int except) const {
  int n = 0;
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    if (static_cast<int>(l) == except || lane_busy_[l] || lane_head_[l] >= lanes_[l].size())
      continue;
    const OpState& s = ops_[static_cast<std::size_t>(lanes_[l][lane_head_[l]])];
    if (s.remaining_deps == 0 && s.earliest_start <= queue_.now()) ++n;
  }
  return n;
}

void Simulator::try_start() {
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    if (lane_busy_[l] || lane_head_[l] >= lanes_[l].size()) continue;
    int id = lanes_[l][lane_head_[l]];
    OpState& s = ops_[static_cast<std::size_t>(id)];
    if (s.remaining_deps > 0) continue;
    if (s.earliest_start > queue_.now()) {
      if (wake_pending_ > s.earliest_start) {  // one wake-up at the earliest launch
        wake_pending_ = s.earliest_start;
        queue_.schedule(s.earliest_start, Priority::Compute, [this] {
          wake_pending_ = kNever;
          try_start();
        });
      }
      continue;
    }
    const auto& op = schedule_.ops[static_cast<std::size_t>(id)];
    if (gpu_ && op.kernels > 0 &&
        (free_sms_ == 0 || running_kernels_ >= machine_.compute.max_concurrent_kernels))
      continue;
    start(id);
  }
}

void Simulator::start(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  const auto& op = schedule_.ops[static_cast<std::size_t>(id)];
  lane_busy_[static_cast<std::size_t>(s.lane)] = true;
  ++lane_head_[static_cast<std::size_t>(s.lane)];
  s.started = true;
  s.start = queue_.now();
  if (op.step >= 0 && op.step < static_cast<int>(first_forward_.size()) &&
      first_forward_[static_cast<std::size_t>(op.step)] == id) {
    boundaries_[static_cast<std::size_t>(op.step)] = snapshot();
    boundary_taken_[static_cast<std::size_t>(op.step)] = true;
  }
  s.program = compute::build_access_program(trace_, schedule_, op, machine_.compute);
  if (op.kernels == 0) {  // a view: no kernel, no memory
    finish(id);
    return;
  }
  if (gpu_) {
    // The block scheduler shares SMs with kernels of other streams that are ready now.
    std::int64_t want = std::min<std::int64_t>(s.program.grid_blocks, free_sms_);
    if (ready_lanes_waiting(s.lane) > 0) want = std::max<std::int64_t>(1, (want + 1) / 2);
    for (std::size_t sm = 0; sm < sm_free_.size() && want > 0; ++sm) {
      if (!sm_free_[sm]) continue;
      sm_free_[sm] = false;
      s.cores.push_back(static_cast<int>(sm));
      --want;
      --free_sms_;
    }
    ++running_kernels_;
  } else {
    int first = s.lane * machine_.compute.threads_per_op;
    for (int c = 0; c < machine_.compute.threads_per_op; ++c) s.cores.push_back(first + c);
  }
  for (int c : s.cores) s.dram_at_start += tap_->bytes_of(c);
  // CPU: the op's dispatches run on the host before its work; GPU: paid by the launcher.
  Tick dispatch = gpu_ ? 0 : op.kernels * machine_.compute.dispatch_overhead;
  if (dispatch > 0) {
    queue_.schedule_in(dispatch, Priority::Compute, [this, id] { begin_work(id); });
  } else {
    begin_work(id);
  }
}

void Simulator::begin_work(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  s.pass = 0;
  s.chunks = -1;  // set up the first pass in advance()
  advance(id);
}

// Cores that work on the current pass: all of the op's, or fewer where the kernel's grain
// leaves some idle (a small tensor's elementwise op runs on one thread: MemoryPass::
// max_threads). GPUs: every SM the op holds.
int Simulator::pass_cores(const OpState& s) const {
  const int all = static_cast<int>(s.cores.size());
  const int limit =
      gpu_ || s.pass >= s.program.passes.size() ? 0 : s.program.passes[s.pass].max_threads;
  return limit > 0 ? std::min(all, limit) : all;
}

Tick Simulator::compute_time(const OpState& s, std::int64_t flops) const {
  if (flops <= 0) return 0;
  double rate =
      machine_.compute.flops_per_second(s.program.op_class, s.program.dtype, pass_cores(s));
  FUSIM_ASSERT(rate > 0, "a positive FLOP rate");
  return static_cast<Tick>(static_cast<double>(flops) / rate * 1e12 + 0.5);
}

void Simulator::issue_chunk(int id, int chunk) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  const compute::ProgramPass& pass = s.program.passes[s.pass];
  const auto unit = static_cast<std::int64_t>(caches_->unit_bytes());
  const auto cores = static_cast<std::int64_t>(pass_cores(s));
  const int chunks = s.chunks;
  int& outstanding = s.outstanding[static_cast<std::size_t>(chunk)];
  outstanding = 1;  // held until every range of the chunk is issued
  auto done = [this, id, chunk](Tick) {
    OpState& st = ops_[static_cast<std::size_t>(id)];
    if (--st.outstanding[static_cast<std::size_t>(chunk)] == 0) advance(id);
  };
  Tick rereads_in = 0;
  for (const auto& r : pass.ranges) {
    // The first read (or the write) of the range goes through the hierarchy, so cache
    // contents and DRAM traffic are simulated; its GEMM re-reads (repeats - 1 more passes
    // over the operand, interleaved with it) are served analytically by the level that
    // holds the operand: streaming them again would only find it there again, at 10-100x
    // the events.
    auto [lo, hi] = aligned_slice(r.addr, r.bytes, chunk, chunks, unit);
    if (r.repeats > 1) {
      auto [rlo, rhi] = chunk_slice(r.bytes * (r.repeats - 1), chunk, chunks, 1);
      if (rhi > rlo)
        rereads_in = std::max(rereads_in, serve_rereads(id, reread_level(r.bytes), rhi - rlo));
    }
    if (hi <= lo) continue;
    // Split the slice across the op's cores in whole units.
    const std::uint64_t slice_addr = r.addr + static_cast<std::uint64_t>(lo);
    for (std::int64_t c = 0; c < cores; ++c) {
      auto [b0, b1] = aligned_slice(slice_addr, hi - lo, c, cores, unit);
      if (b0 == b1) continue;
      ++outstanding;
      caches_->start_range(s.cores[static_cast<std::size_t>(c)],
                           r.addr + static_cast<std::uint64_t>(lo + b0),
                           static_cast<std::uint64_t>(b1 - b0),
                           r.write ? cache::AccessKind::Write : cache::AccessKind::Read, done);
    }
  }
  if (rereads_in > queue_.now()) {
    ++outstanding;
    queue_.schedule(rereads_in, Priority::Response, [done, rereads_in] { done(rereads_in); });
  }
  if (--outstanding == 0) queue_.schedule_in(0, Priority::Response, [this, id] { advance(id); });
}

void Simulator::advance(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  while (true) {
    if (s.chunks < 0) {  // entering pass s.pass
      if (s.pass >= s.program.passes.size()) {
        if (queue_.now() < s.earliest_end) {
          queue_.schedule(s.earliest_end, Priority::Compute, [this, id] { finish(id); });
        } else {
          finish(id);
        }
        return;
      }
      const auto& pass = s.program.passes[s.pass];
      s.chunks = static_cast<int>(
          std::max<std::int64_t>(1, ceil_div(first_read_bytes(pass), options_.chunk_bytes)));
      s.next_mem = s.mem_done_prefix = s.comp_done = 0;
      s.outstanding.assign(static_cast<std::size_t>(s.chunks), 0);
    }
    while (s.mem_done_prefix < s.next_mem &&
           s.outstanding[static_cast<std::size_t>(s.mem_done_prefix)] == 0)
      ++s.mem_done_prefix;
    bool progressed = false;
    // Double buffering: chunk j's data comes in once j-1's is in flight or done, j-2's is
    // done, and the compute of chunk j-2 has finished.
    if (s.next_mem < s.chunks && s.next_mem < s.mem_done_prefix + 2 &&
        s.comp_done >= s.next_mem - 1) {
      issue_chunk(id, s.next_mem++);
      progressed = true;
    }
    if (!s.computing && s.comp_done < s.mem_done_prefix) {
      const auto& pass = s.program.passes[s.pass];
      std::int64_t share = pass.flops / s.chunks;
      std::int64_t flops =
          s.comp_done + 1 == s.chunks ? pass.flops - share * (s.chunks - 1) : share;
      Tick t = compute_time(s, flops);
      if (t == 0) {
        ++s.comp_done;
      } else {
        s.computing = true;
        queue_.schedule_in(t, Priority::Compute, [this, id] {
          OpState& st = ops_[static_cast<std::size_t>(id)];
          st.computing = false;
          ++st.comp_done;
          advance(id);
        });
      }
      progressed = true;
    }
    if (s.comp_done == s.chunks) {
      ++s.pass;
      s.chunks = -1;
      continue;
    }
    if (!progressed) return;
  }
}

void Simulator::finish(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  s.done = true;
  s.end = queue_.now();
  for (int c : s.cores) s.dram_bytes += tap_->bytes_of(c);
  s.dram_bytes -= s.dram_at_start;
  if (gpu_ && !s.cores.empty()) {
    for (int c : s.cores) sm_free_[static_cast<std::size_t>(c)] = true;
    free_sms_ += static_cast<int>(s.cores.size());
    --running_kernels_;
  }
  lane_busy_[static_cast<std::size_t>(s.lane)] = false;
  for (int next : dependents_[static_cast<std::size_t>(id)])
    --ops_[static_cast<std::size_t>(next)].remaining_deps;
  s.program = {};  // free the program's memory
  ++finished_;
  if (options_.progress && finished_ % progress_every_ == 0)
    options_.progress(static_cast<double>(finished_) / static_cast<double>(ops_.size()));
  try_start();
}

SimulationDetail Simulator::run() {
  queue_.schedule(0, Priority::Compute, [this] { try_start(); });
  queue_.run();
  if (finished_ != ops_.size()) {
    std::string stuck;
    for (std::size_t i = 0; i < ops_.size() && stuck.size() < 2000; ++i)
      if (!ops_[i].done)
        stuck += fmt::format(" op {} ({} deps left, {})", i, ops_[i].remaining_deps,
                             ops_[i].started ? "started" : "waiting");
    FUSIM_ASSERT(false, fmt::format("simulation stalled with {} of {} ops done:{}\n{}", finished_,
                                    ops_.size(), stuck, caches_->describe_state()));
  }
  SimulationDetail out;
  fill_result(out);
  return out;
}

}  // namespace fusim::exec
