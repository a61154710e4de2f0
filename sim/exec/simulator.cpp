#include "exec/simulator.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <string>

#include "core/error.h"
#include "core/int_math.h"
#include "core/watchdog.h"
#include "exec/tensor_side.h"

namespace fusim::exec {

namespace {

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
  const std::int64_t span = round_up(head + total, unit);
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
      units_(machine.compute, schedule) {
  cache::HierarchyConfig config = machine.caches;
  config.block_bytes = options.block_bytes;
  auto fidelity =
      options.fidelity == Fidelity::Line ? cache::Fidelity::Line : cache::Fidelity::Block;
  const int units = machine.compute.units;
  if (options.fidelity == Fidelity::Tensor) {
    tensor_ = std::make_unique<TensorSide>(queue_, machine, options);
  } else {
    caches_ = std::make_unique<cache::Hierarchy>(config, fidelity, units);
  }
  memory_ = make_main_memory(machine, queue_);  // tensor: only behind the tap, never sent to
  tap_ = std::make_unique<MemoryTap>(queue_, *memory_.port, units,
                                     options.dram_series ? us(1) : Tick(0));
  if (caches_) caches_->attach_memory(queue_, *tap_);
  rereads_ = std::make_unique<GemmRereads>(
      queue_, tensor_ ? RereadTiming::of(*tensor_) : RereadTiming::of(*caches_), config, *tap_,
      streaming_bytes_per_ps(machine));

  const auto& sops = schedule.ops;
  ops_.resize(sops.size());
  dependents_.resize(sops.size());
  for (std::size_t i = 0; i < sops.size(); ++i) {
    const auto& op = sops[i];
    FUSIM_ASSERT(op.id == static_cast<int>(i), "schedule op ids are their indices");
    ops_[i].remaining_deps = static_cast<int>(op.deps.size());
    for (int dep : op.deps) {
      FUSIM_ASSERT(dep >= 0 && dep < static_cast<int>(i),
                   fmt::format("op {} depends on op {} issued after it", i, dep));
      dependents_[static_cast<std::size_t>(dep)].push_back(static_cast<int>(i));
    }
  }
  first_forward_ = schedule::step_openers(schedule);
  boundaries_.resize(first_forward_.size());
  // The model context term's families (compute/model_context.h): each op with a kernel, updates
  // aside (calibrate fits their families on runs of updates, and their switches apart).
  if (machine.kind != compute::UnitKind::Gpu && machine.compute.model_context.given()) {
    std::map<std::string, int> ids;
    context_family_.assign(sops.size(), -1);
    for (const auto& op : sops) {
      if (op.kind == schedule::OpKind::Update || op.kernels == 0) continue;
      const std::string family = compute::op_family(trace, schedule, op);
      if (family.empty()) continue;
      context_family_[static_cast<std::size_t>(op.id)] =
          ids.emplace(family, static_cast<int>(ids.size())).first->second;
    }
    family_last_start_.assign(ids.size(), -1);
  }
  progress_every_ = std::max<std::size_t>(1, sops.size() / 200);
}

Simulator::~Simulator() = default;

std::vector<DramRequesterReads> Simulator::dram_requesters() const {
  return memory_.requesters ? memory_.requesters() : std::vector<DramRequesterReads>{};
}

Snapshot Simulator::snapshot() const {
  return {queue_.now(), tap_->total_bytes(),
          rereads_->add_to(tensor_ ? tensor_->stats() : caches_->stats()), dram_requesters()};
}

int Simulator::ready_lanes_waiting(int except) const {
  int n = 0;
  for (int l = 0; l < units_.lanes(); ++l) {
    const int id = l == except ? -1 : units_.next(l);
    if (id < 0) continue;
    if (ops_[static_cast<std::size_t>(id)].remaining_deps == 0 &&
        units_.earliest_start(id) <= queue_.now())
      ++n;
  }
  return n;
}

void Simulator::try_start() {
  for (int l = 0; l < units_.lanes(); ++l) {
    const int id = units_.next(l);
    if (id < 0) continue;
    OpState& s = ops_[static_cast<std::size_t>(id)];
    if (s.remaining_deps > 0) continue;
    const Tick earliest = units_.earliest_start(id);
    if (earliest > queue_.now()) {
      if (wake_pending_ > earliest) {  // one wake-up at the earliest launch
        wake_pending_ = earliest;
        queue_.schedule(earliest, Priority::Compute, [this] {
          wake_pending_ = kNever;
          try_start();
        });
      }
      continue;
    }
    if (!units_.can_place(schedule_.ops[static_cast<std::size_t>(id)])) continue;
    start(id);
  }
}

void Simulator::start(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  const auto& op = schedule_.ops[static_cast<std::size_t>(id)];
  units_.start(op);
  s.started = true;
  s.start = queue_.now();
  if (op.step >= 0 && op.step < static_cast<int>(first_forward_.size()) &&
      first_forward_[static_cast<std::size_t>(op.step)] == id)
    boundaries_[static_cast<std::size_t>(op.step)] = snapshot();
  s.program = compute::build_access_program(trace_, schedule_, op, machine_.compute);
  // A measured profile's compute time (SimOptions::op_compute) wins; else the calibrated
  // per-family cost (the machine's op_costs); the memory side stays simulated. A profiled op
  // keeps the machine's dispatch model, not its family's calibrated fixed cost: the measured
  // time holds the op's own dispatch, and a family's fixed cost is fitted over other shapes
  // (it absorbs the fit's error: up to ~150 us on a 2-core VM), so it would be counted on
  // top of a measurement that already has it.
  const bool profiled = static_cast<std::size_t>(id) < options_.op_compute.size() &&
                        options_.op_compute[static_cast<std::size_t>(id)] >= 0;
  if (profiled) {
    compute::set_compute_time(s.program, options_.op_compute[static_cast<std::size_t>(id)]);
  } else if (auto cost = compute::calibrated_cost(machine_.compute, trace_, schedule_, op,
                                                  machine_.kind == compute::UnitKind::Gpu
                                                      ? machine_.compute.units
                                                      : machine_.compute.threads_per_op)) {
    s.program.serial = cost->serial;
    if (cost->has_compute) compute::set_compute_time(s.program, cost->compute);
  }
  const bool gpu = machine_.kind == compute::UnitKind::Gpu;
  if (op.kernels == 0) {  // a view: no kernel, no memory; its calibrated call and a profile's delay
    Tick delay = static_cast<std::size_t>(id) < options_.op_delay.size()
                     ? options_.op_delay[static_cast<std::size_t>(id)]
                     : 0;
    if (!gpu && s.program.serial > 0) delay += s.program.serial;
    if (!gpu) delay += compute::switch_cost(machine_.compute.op_costs, schedule_, op);
    if (delay > 0) {
      queue_.schedule_in(delay, Priority::Compute, [this, id] { finish(id); });
    } else {
      finish(id);
    }
    return;
  }
  s.cores =
      units_.take_units(op, s.program.grid_blocks, ready_lanes_waiting(units_.lane_of(id)) > 0);
  for (int c : s.cores) s.dram_at_start += tap_->bytes_of(c);
  // CPU: a calibrated serial part (op_costs) replaces the dispatch model; GPU: the
  // launcher pays dispatch, so a GPU's serial part is 0 here too.
  Tick dispatch = !gpu && s.program.serial >= 0 ? s.program.serial : units_.dispatch_time(op);
  // Crossing the update boundary on a CPU host (compute/op_cost_model.h switch_cost).
  if (!gpu) dispatch += compute::switch_cost(machine_.compute.op_costs, schedule_, op);
  if (static_cast<std::size_t>(id) < options_.op_delay.size())
    dispatch += options_.op_delay[static_cast<std::size_t>(id)];
  // What the op pays for its family's code and state gone cold since it last ran; a
  // profiled op's measured time holds its own.
  if (!context_family_.empty() && context_family_[static_cast<std::size_t>(id)] >= 0) {
    Tick& last =
        family_last_start_[static_cast<std::size_t>(context_family_[static_cast<std::size_t>(id)])];
    if (!profiled)
      dispatch += machine_.compute.model_context.extra(last < 0 ? -1 : queue_.now() - last);
    last = queue_.now();
  }
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

int Simulator::working_units(const OpState& s) const {
  const int held = static_cast<int>(s.cores.size());
  return s.pass < s.program.passes.size()
             ? units_.working_units(held, s.program.passes[s.pass].max_threads)
             : held;
}

void Simulator::issue_chunk(int id, int chunk) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  const compute::ProgramPass& pass = s.program.passes[s.pass];
  const auto unit =
      static_cast<std::int64_t>(tensor_ ? tensor_->unit_bytes() : caches_->unit_bytes());
  const auto cores = static_cast<std::int64_t>(working_units(s));
  const int chunks = s.chunks;
  int& outstanding = s.outstanding[static_cast<std::size_t>(chunk)];
  outstanding = 1;  // held until every range of the chunk is issued
  auto done = [this, id, chunk](Tick) {
    OpState& st = ops_[static_cast<std::size_t>(id)];
    if (--st.outstanding[static_cast<std::size_t>(chunk)] == 0) advance(id);
  };
  // Posted writes (compute_config.h SerialReads): a write range counts on the chunk's
  // writes, so its compute waits for the reads alone.
  const bool posted = !s.writes.empty();
  int* writes = posted ? &s.writes[static_cast<std::size_t>(chunk)] : nullptr;
  if (writes) *writes = 1;  // held as `outstanding` is; the reads' advance then sees them
  auto written = [this, id, chunk](Tick) {
    OpState& st = ops_[static_cast<std::size_t>(id)];
    if (--st.writes[static_cast<std::size_t>(chunk)] == 0) advance(id);
  };
  Tick rereads_in = 0;
  std::vector<residency::TensorRange> slices;         // tensor fidelity: the chunk at once
  std::vector<residency::TensorRange> posted_slices;  // its posted writes
  for (const auto& r : pass.ranges) {
    // The first read (or the write) of the range goes through the hierarchy, so cache
    // contents and DRAM traffic are simulated; its GEMM re-reads (repeats - 1 more passes
    // over the operand, interleaved with it) are served analytically by the level that
    // holds the operand: streaming them again would only find it there again, at 10-100x
    // the events.
    auto [lo, hi] = aligned_slice(r.addr, r.bytes, chunk, chunks, unit);
    if (r.repeats > 1 && r.memory_rereads < 0) {
      auto [rlo, rhi] = chunk_slice(r.bytes * (r.repeats - 1), chunk, chunks, 1);
      if (rhi > rlo)
        rereads_in =
            std::max(rereads_in, rereads_->serve(rereads_->level_for(r.bytes), rhi - rlo, s.cores));
    } else if (r.repeats > 1) {
      // A GPU GEMM's wave (compute/access_program.h): memory_rereads bytes from main
      // memory, the rest from the last cache level.
      auto [mlo, mhi] = chunk_slice(r.memory_rereads, chunk, chunks, 1);
      auto [llo, lhi] = chunk_slice(r.bytes * (r.repeats - 1) - r.memory_rereads, chunk, chunks, 1);
      if (mhi > mlo)
        rereads_in = std::max(rereads_in, rereads_->serve(rereads_->levels(), mhi - mlo, s.cores));
      if (lhi > llo)
        rereads_in =
            std::max(rereads_in, rereads_->serve(rereads_->levels() - 1, lhi - llo, s.cores));
    }
    if (hi <= lo) continue;
    const bool post = posted && r.write;
    if (tensor_) {
      (post ? posted_slices : slices)
          .push_back({r.addr + static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo),
                      r.write});
      continue;
    }
    // Split the slice across the op's cores in whole units.
    const std::uint64_t slice_addr = r.addr + static_cast<std::uint64_t>(lo);
    for (std::int64_t c = 0; c < cores; ++c) {
      auto [b0, b1] = aligned_slice(slice_addr, hi - lo, c, cores, unit);
      if (b0 == b1) continue;
      if (post) {
        ++*writes;
        caches_->start_range(
            s.cores[static_cast<std::size_t>(c)], r.addr + static_cast<std::uint64_t>(lo + b0),
            static_cast<std::uint64_t>(b1 - b0), cache::AccessKind::Write, written);
        continue;
      }
      ++outstanding;
      caches_->start_range(s.cores[static_cast<std::size_t>(c)],
                           r.addr + static_cast<std::uint64_t>(lo + b0),
                           static_cast<std::uint64_t>(b1 - b0),
                           r.write ? cache::AccessKind::Write : cache::AccessKind::Read, done);
    }
  }
  if (!slices.empty() || !posted_slices.empty()) {
    const std::vector<int> used(s.cores.begin(), s.cores.begin() + cores);
    if (!slices.empty()) {
      ++outstanding;
      tensor_->issue(used, slices, *tap_, done);
    }
    if (!posted_slices.empty()) {
      ++*writes;
      tensor_->issue(used, posted_slices, *tap_, written);
    }
  }
  if (rereads_in > queue_.now()) {
    ++outstanding;
    queue_.schedule(rereads_in, Priority::Response, [done, rereads_in] { done(rereads_in); });
  }
  if (writes) --*writes;  // an advance follows: the reads' callback or the one below
  if (--outstanding == 0) queue_.schedule_in(0, Priority::Response, [this, id] { advance(id); });
}

void Simulator::advance(int id) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  while (true) {
    if (s.chunks < 0) {  // entering pass s.pass
      if (s.pass >= s.program.passes.size()) {
        const Tick earliest_end = units_.earliest_end(id);
        if (queue_.now() < earliest_end) {
          queue_.schedule(earliest_end, Priority::Compute, [this, id] { finish(id); });
        } else {
          finish(id);
        }
        return;
      }
      const auto& pass = s.program.passes[s.pass];
      s.chunks = static_cast<int>(
          std::max<std::int64_t>(1, ceil_div(first_read_bytes(pass), options_.chunk_bytes)));
      s.next_mem = s.mem_done_prefix = s.comp_done = s.writes_done_prefix = 0;
      s.outstanding.assign(static_cast<std::size_t>(s.chunks), 0);
      if (machine_.compute.overlap_of(s.program.op_class) == compute::MemoryOverlap::SerialReads)
        s.writes.assign(static_cast<std::size_t>(s.chunks), 0);
    }
    while (s.mem_done_prefix < s.next_mem &&
           s.outstanding[static_cast<std::size_t>(s.mem_done_prefix)] == 0)
      ++s.mem_done_prefix;
    if (s.writes.empty()) {
      s.writes_done_prefix = s.mem_done_prefix;
    } else {
      while (s.writes_done_prefix < s.next_mem &&
             s.writes[static_cast<std::size_t>(s.writes_done_prefix)] == 0)
        ++s.writes_done_prefix;
    }
    bool progressed = false;
    // Double buffering: chunk j's data comes in once j-1's is in flight or done, j-2's is
    // done, and the compute of chunk j-2 has finished. Serial memory (compute_config.h):
    // once chunk j-1's data is in and its compute has finished. Posted writes: and once
    // chunk j-2's writes are in.
    const int window =
        machine_.compute.overlap_of(s.program.op_class) == compute::MemoryOverlap::DoubleBuffered
            ? 2
            : 1;
    if (s.next_mem < s.chunks && s.next_mem < s.mem_done_prefix + window &&
        s.next_mem < s.writes_done_prefix + 2 && s.comp_done >= s.next_mem - (window - 1)) {
      issue_chunk(id, s.next_mem++);
      progressed = true;
    }
    if (!s.computing && s.comp_done < s.mem_done_prefix) {
      const auto& pass = s.program.passes[s.pass];
      Tick t = 0;
      if (pass.compute >= 0) {  // a set compute time: chunk j's share, cumulatively rounded
        const auto j = static_cast<Tick>(s.comp_done);
        t = pass.compute * (j + 1) / s.chunks - pass.compute * j / s.chunks;
      } else {
        std::int64_t share = pass.flops / s.chunks;
        std::int64_t flops =
            s.comp_done + 1 == s.chunks ? pass.flops - share * (s.chunks - 1) : share;
        t = units_.compute_time(s.program.op_class, s.program.dtype, working_units(s), flops);
      }
      s.compute += t;
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
    if (s.comp_done == s.chunks && s.writes_done_prefix == s.chunks) {
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
  units_.finish(schedule_.ops[static_cast<std::size_t>(id)], s.cores);
  for (int next : dependents_[static_cast<std::size_t>(id)])
    --ops_[static_cast<std::size_t>(next)].remaining_deps;
  s.program = {};  // free the program's memory
  ++finished_;
  if (options_.progress && finished_ % progress_every_ == 0)
    options_.progress(static_cast<double>(finished_) / static_cast<double>(ops_.size()));
  try_start();
}

std::string Simulator::describe_ops() const {
  std::string text = fmt::format("{} of {} ops done\n", finished_, ops_.size());
  int shown = 0;
  for (std::size_t i = 0; i < ops_.size() && shown < 40; ++i) {
    const OpState& s = ops_[i];
    if (s.done) continue;
    ++shown;
    text += fmt::format("op {} ({} {}, step {}): {}, {} deps left", i,
                        schedule::to_string(schedule_.ops[i].kind), schedule_.ops[i].layer,
                        schedule_.ops[i].step, s.started ? "started" : "waiting", s.remaining_deps);
    if (s.started)
      text += fmt::format(", pass {}, chunks issued {} done {} computed {}", s.pass, s.next_mem,
                          s.mem_done_prefix, s.comp_done);
    text += "\n";
  }
  return text;
}

SimulationRecord Simulator::run() {
  // A stalled simulation (the queue empties with work left) is a bug in a model: the
  // watchdog dumps every component, as ChampSim's deadlock check does.
  Watchdog watchdog;
  watchdog.watch(
      "ops", [this] { return finished_ != ops_.size(); }, [this] { return describe_ops(); });
  watchdog.watch(
      "compute units", [this] { return units_.busy(); }, [this] { return units_.describe(); });
  watchdog.watch(
      "caches", [this] { return tensor_ ? tensor_->busy() : caches_->busy(); },
      [this] { return tensor_ ? tensor_->describe_state() : caches_->describe_state(); });
  watchdog.watch("main memory", memory_.busy, memory_.describe);
  queue_.schedule(0, Priority::Compute, [this] { try_start(); });
  try {
    watchdog.run_checked(queue_);
  } catch (const SimulationStall& stall) {
    FUSIM_ASSERT(false, fmt::format("simulation stalled with {} of {} ops done\n{}", finished_,
                                    ops_.size(), stall.what()));
  }
  FUSIM_ASSERT(finished_ == ops_.size(), "every op finished");

  SimulationRecord rec;
  rec.boundaries = std::move(boundaries_);
  Tick end = 0;
  rec.ops.reserve(ops_.size());
  for (const auto& s : ops_) {
    end = std::max(end, s.end);
    rec.ops.push_back({s.start, s.end, s.dram_bytes, static_cast<int>(s.cores.size()), s.compute});
  }
  rec.end = {end, tap_->total_bytes(),
             rereads_->add_to(tensor_ ? tensor_->stats() : caches_->stats()), dram_requesters()};
  rec.dram = {tap_->bucket(), tap_->per_bucket()};
  rec.events = static_cast<std::int64_t>(queue_.executed());
  return rec;
}

}  // namespace fusim::exec
