#include "exec/simulator.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/units.h"
#include "mem/cache/fixed_memory.h"
#include "mem/dram/dram_system.h"

namespace fusim::exec {

namespace {
bool is_zero_size(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>() == 0;
  if (v.is_string()) return parse_bytes(v.get<std::string>()) == std::int64_t{0};
  return false;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

std::unique_ptr<mem::MemoryPort> make_main_memory(const Machine& m, EventQueue& queue) {
  JsonView d = m.dram();
  if (d.at("preset").as_string() == "fixed") {
    d.reject_unknown_keys({"preset", "latency_ns", "bandwidth_gbps"});
    Tick latency = ns(d.at("latency_ns").as_number_in(0, 1e6));
    double bw = d.at("bandwidth_gbps").as_number_in(0, 1e6) * 1e9;
    return std::make_unique<mem::FixedLatencyMemory>(queue, latency, bw);
  }
  return dram::make_dram_system(d, queue);
}

cache::HierarchyConfig hierarchy_config(const Machine& m) {
  // A level of size 0 is a what-if "without this level" (caches.LLC.size=0): it is left out.
  nlohmann::json caches = m.document.at("caches");
  auto& levels = caches.at("levels");
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& l : levels)
    if (!l.is_object() || !l.contains("size") || !is_zero_size(l["size"])) kept.push_back(l);
  if (kept.empty() && !levels.empty())
    JsonView(m.document, m.file)
        .at("caches")
        .at("levels")
        .fail("at least one level of non-zero size");
  levels = kept;
  return cache::parse_hierarchy_config(JsonView(caches, m.file, "caches"));
}

void check_memory_sections(const Machine& m) {
  hierarchy_config(m);
  EventQueue scratch;
  make_main_memory(m, scratch);
}

Simulator::Simulator(const workload::Trace& trace, const schedule::Schedule& schedule,
                     const Machine& machine, const SimOptions& options)
    : trace_(trace),
      schedule_(schedule),
      machine_(machine),
      options_(options),
      gpu_(machine.kind == compute::UnitKind::Gpu) {
  cache::HierarchyConfig config = hierarchy_config(machine);
  config.block_bytes = options.block_bytes;
  auto fidelity =
      options.fidelity == Fidelity::Line ? cache::Fidelity::Line : cache::Fidelity::Block;
  const int units = machine.compute.units;
  caches_ = std::make_unique<cache::Hierarchy>(config, fidelity, units);
  memory_ = make_main_memory(machine, queue_);
  tap_ = std::make_unique<MemoryTap>(queue_, *memory_, units, us(1));
  caches_->attach_memory(queue_, *tap_);

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
  for (int l = 0; l < lanes; ++l) {
    if (gpu_) {
      lane_names_.push_back(fmt::format("stream {}", l));
    } else {
      int first = l * machine.compute.threads_per_op;
      lane_names_.push_back(
          fmt::format("cores {}-{}", first, first + machine.compute.threads_per_op - 1));
    }
  }
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
  first_forward_.assign(static_cast<std::size_t>(std::max(1, schedule.steps)), -1);
  for (const auto& op : sops) {
    if (op.step < 0 || op.step >= static_cast<int>(first_forward_.size())) continue;
    int& f = first_forward_[static_cast<std::size_t>(op.step)];
    if (op.kind == schedule::OpKind::Forward && f < 0) f = op.id;
  }
  boundaries_.resize(first_forward_.size());
  boundary_taken_.assign(first_forward_.size(), false);
  progress_every_ = std::max<std::size_t>(1, sops.size() / 200);
}

Simulator::~Simulator() = default;

Simulator::Snapshot Simulator::snapshot() const {
  return {queue_.now(), tap_->total_bytes(), caches_->stats()};
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

Tick Simulator::compute_time(const OpState& s, std::int64_t flops) const {
  if (flops <= 0) return 0;
  double rate = machine_.compute.flops_per_second(s.program.op_class, s.program.dtype,
                                                  static_cast<int>(s.cores.size()));
  FUSIM_ASSERT(rate > 0, "a positive FLOP rate");
  return static_cast<Tick>(static_cast<double>(flops) / rate * 1e12 + 0.5);
}

void Simulator::issue_chunk(int id, int chunk) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  const compute::ProgramPass& pass = s.program.passes[s.pass];
  const auto unit = static_cast<std::int64_t>(caches_->unit_bytes());
  const auto cores = static_cast<std::int64_t>(s.cores.size());
  const std::int64_t chunks = s.chunks;
  int& outstanding = s.outstanding[static_cast<std::size_t>(chunk)];
  outstanding = 1;  // held until every range of the chunk is issued
  auto done = [this, id, chunk](Tick) {
    OpState& st = ops_[static_cast<std::size_t>(id)];
    if (--st.outstanding[static_cast<std::size_t>(chunk)] == 0) advance(id);
  };
  for (const auto& r : pass.ranges) {
    const std::int64_t total = r.streamed_bytes();
    // This chunk's share of the stream, on unit boundaries (the last chunk takes the rest).
    std::int64_t lo = total * chunk / chunks / unit * unit;
    std::int64_t hi = chunk + 1 == chunks ? total : total * (chunk + 1) / chunks / unit * unit;
    while (lo < hi) {  // a re-read stream wraps around the tensor
      std::int64_t offset = lo % r.bytes;
      std::int64_t piece = std::min(hi - lo, r.bytes - offset);
      // Split the piece across the op's cores in whole units.
      std::int64_t units_in = ceil_div(piece, unit);
      for (std::int64_t c = 0; c < cores; ++c) {
        std::int64_t u0 = units_in * c / cores, u1 = units_in * (c + 1) / cores;
        if (u0 == u1) continue;
        std::int64_t b0 = u0 * unit, b1 = std::min(piece, u1 * unit);
        ++outstanding;
        caches_->start_range(s.cores[static_cast<std::size_t>(c)],
                             r.addr + static_cast<std::uint64_t>(offset + b0),
                             static_cast<std::uint64_t>(b1 - b0),
                             r.write ? cache::AccessKind::Write : cache::AccessKind::Read, done);
      }
      lo += piece;
    }
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
          std::max<std::int64_t>(1, ceil_div(pass.streamed_bytes(), options_.chunk_bytes)));
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
