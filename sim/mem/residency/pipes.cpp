// Max-min fair rates of the tensor fidelity's flows (pipes.h), solved together with the
// memory latency their load causes.
#include "mem/residency/pipes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace fusim::residency {
namespace {
constexpr double kDone = 1e-9;         // a flow with less work left than this is finished
constexpr double kUnbounded = 1.0;     // rate of a flow no resource limits: 1 per ps
constexpr double kRelativeGap = 1e-4;  // the latency fixed point's precision (bandwidth)
constexpr int kMaxBisections = 24;
}  // namespace

Pipes::Pipes(EventQueue& queue, PipeConfig config, MemoryCurve& memory)
    : queue_(queue), config_(std::move(config)), memory_(memory) {
  FUSIM_ASSERT(
      !config_.levels.empty() && config_.levels.size() <= static_cast<std::size_t>(kMaxPipeLevels),
      "1..8 pipe levels");
  resources_.push_back({});  // main memory: capacity set by solve()
  memory_resource_ = 0;
  shared_resources_.assign(2 * config_.levels.size(), -1);
  for (std::size_t k = 0; k < config_.levels.size(); ++k) {
    const PipeLevel& l = config_.levels[k];
    if (!l.shared) continue;
    shared_resources_[2 * k] = static_cast<int>(resources_.size());
    resources_.push_back({1.0, false, -1});
    shared_resources_[2 * k + 1] = static_cast<int>(resources_.size());
    resources_.push_back({static_cast<double>(l.mshrs), true, -1});
  }
}

int Pipes::resource_of(int group, int level, bool mshr) {
  const PipeLevel& l = config_.levels[static_cast<std::size_t>(level)];
  if (l.shared) return shared_resources_[2 * static_cast<std::size_t>(level) + (mshr ? 1 : 0)];
  FUSIM_ASSERT(group >= 0, "a core group");
  if (static_cast<std::size_t>(group) >= group_resources_.size()) {
    std::array<int, 2 * kMaxPipeLevels> none;
    none.fill(-1);
    group_resources_.resize(static_cast<std::size_t>(group) + 1, none);
  }
  int& r = group_resources_[static_cast<std::size_t>(group)]
                           [2 * static_cast<std::size_t>(level) + (mshr ? 1 : 0)];
  if (r < 0) {
    // Per core: a port serves one core, an MSHR file holds `mshrs` of that core's misses.
    r = static_cast<int>(resources_.size());
    resources_.push_back({mshr ? static_cast<double>(l.mshrs) : 1.0, mshr, group});
  }
  return r;
}

double Pipes::first_batch(const FlowWork& w) const {
  double batch = std::numeric_limits<double>::infinity();
  const double cores = std::max(w.cores, 1);
  for (const PipeLevel& l : config_.levels)
    batch = std::min(batch, static_cast<double>(l.mshrs) * (l.shared ? 1.0 : cores));
  return batch;
}

double Pipes::mshrs_held(const Flow& f) const {
  // Little's law: misses issued per ps times the time each holds its MSHR.
  const double latency = static_cast<double>(config_.miss_path_latency + memory_latency_);
  const double batch = first_batch(f.work);
  return batch > 0 ? std::min(1.0, f.rate * f.work.memory_reads * latency / batch) : 1.0;
}

double Pipes::free_batch(const FlowWork& w) {
  if (w.memory_reads <= 0) return 1;
  double held = 0;
  for (const Flow& o : flows_)
    if (o.work.group == w.group && o.work.memory_reads > 0 && o.remaining > kDone)
      held += mshrs_held(o);
  const Tick now = queue_.now();
  if (static_cast<std::size_t>(w.group) < tails_.size()) {
    auto& tails = tails_[static_cast<std::size_t>(w.group)];
    // The last batch of a finished flow is answered evenly over its tail.
    std::size_t keep = 0;
    for (const Tail& t : tails) {
      if (t.end <= now) continue;
      held += t.held * static_cast<double>(t.end - now) /
              static_cast<double>(std::max<Tick>(1, t.end - t.work_end));
      tails[keep++] = t;
    }
    tails.resize(keep);
  }
  return std::max(0.0, 1.0 - held);
}

void Pipes::start(const FlowWork& work, Done done) {
  advance_to_now();
  Flow f;
  f.work = work;
  f.done = std::move(done);
  f.exempt = free_batch(work);
  // Touch the flow's resources so that they exist before the solve.
  for (std::size_t k = 0; k < config_.levels.size(); ++k) {
    if (work.lookups[k] > 0) resource_of(work.group, static_cast<int>(k), false);
    if (work.memory_reads > 0) resource_of(work.group, static_cast<int>(k), true);
  }
  flows_.push_back(std::move(f));
  solve();
  schedule_next();
}

void Pipes::advance_to_now() {
  const Tick now = queue_.now();
  const double dt = static_cast<double>(now - last_);
  last_ = now;
  if (dt <= 0) return;
  for (Flow& f : flows_) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
  backlog_ = std::max(0.0, backlog_ + (posted_ - drain_) * dt);
  if (backlog_ < 1.0) backlog_ = 0;  // under a byte left: drained (rounding of the event)
}

// Max-min fair unit rates (progressive filling) with the MSHR demands taken at a miss
// latency of `latency_ps`: every unfrozen flow rises at the same unit rate until a
// resource it uses is full; the flows on it keep that rate, the others rise on.
void Pipes::fill(double latency_ps) {
  const std::size_t n = flows_.size(), r = resources_.size();
  level_.assign(n, 0.0);
  frozen_.assign(n, 0);
  used_.assign(r, 0.0);
  // Demands per unit, per resource.
  for (Flow& f : flows_) {
    f.coeff.assign(r, 0.0);
    const FlowWork& w = f.work;
    const double units = std::max(w.units, 1.0);
    const double cores = std::max(w.cores, 1);
    f.coeff[static_cast<std::size_t>(memory_resource_)] = memory_demand(w) / units;
    // The first batch of misses (one per MSHR of the flow's cores that was free when it
    // started) is the tail's.
    const double queued_misses = std::max(0.0, w.memory_reads - first_batch(w) * f.exempt);
    for (std::size_t k = 0; k < config_.levels.size(); ++k) {
      const PipeLevel& l = config_.levels[k];
      const double per = l.shared ? 1.0 : cores;  // private resources are per core
      if (w.lookups[k] > 0)
        f.coeff[static_cast<std::size_t>(resource_of(w.group, static_cast<int>(k), false))] =
            w.lookups[k] * static_cast<double>(l.unit_time) / per / units;
      if (queued_misses > 0)
        f.coeff[static_cast<std::size_t>(resource_of(w.group, static_cast<int>(k), true))] =
            queued_misses * latency_ps / per / units;
    }
  }
  std::size_t left = n;
  while (left > 0) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_resource = r;
    for (std::size_t i = 0; i < r; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (!frozen_[j]) sum += flows_[j].coeff[i];
      if (sum <= 0) continue;
      const double capacity =
          i == static_cast<std::size_t>(memory_resource_) && resources_[i].capacity <= 0
              ? std::numeric_limits<double>::infinity()
              : resources_[i].capacity;
      const double level = std::max(0.0, capacity - used_[i]) / sum;
      if (level < best) {
        best = level;
        best_resource = i;
      }
    }
    if (best_resource == r) {  // nothing limits the rest
      for (std::size_t j = 0; j < n; ++j)
        if (!frozen_[j]) {
          level_[j] = kUnbounded * std::max(flows_[j].work.units, 1.0);
          frozen_[j] = 1;
        }
      break;
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (frozen_[j] || flows_[j].coeff[best_resource] <= 0) continue;
      level_[j] = best;
      frozen_[j] = 1;
      --left;
      for (std::size_t i = 0; i < r; ++i) used_[i] += best * flows_[j].coeff[i];
    }
  }
  memory_rate_ = 0;
  posted_ = 0;
  for (std::size_t j = 0; j < n; ++j) {
    Flow& f = flows_[j];
    f.rate = level_[j] / std::max(f.work.units, 1.0);
    memory_rate_ += f.rate * memory_demand(f.work);
    posted_ += f.rate * posting_bytes(f.work);
  }
}

// The flows' works and the backlog's sign as numbers (the key, compared exactly) and a hash
// of their bits (FNV-1a's multiply, a word at a time).
std::uint64_t Pipes::solution_key(std::vector<double>& key) const {
  key.clear();
  key.push_back(backlog_ > 0 ? 1.0 : 0.0);
  for (const Flow& f : flows_) {
    const FlowWork& w = f.work;
    key.insert(key.end(),
               {f.exempt, static_cast<double>(w.group), static_cast<double>(w.cores), w.units,
                w.memory_reads, w.memory_read_bytes, w.memory_write_bytes, w.writeback_bytes,
                w.posted_bytes, w.read_regions, w.aligned, static_cast<double>(w.deepest)});
    for (std::size_t k = 0; k < config_.levels.size(); ++k) key.push_back(w.lookups[k]);
  }
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (double v : key) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

void Pipes::solve() {
  if (flows_.empty() && backlog_ <= 0) {
    memory_rate_ = posted_ = drain_ = 0;
    return;
  }
  const std::uint64_t hash = solution_key(key_);
  auto& bucket = solutions_[hash];
  Resource& memory = resources_[static_cast<std::size_t>(memory_resource_)];
  for (const auto& [key, s] : bucket) {
    if (key != key_) continue;
    for (std::size_t j = 0; j < flows_.size(); ++j) flows_[j].rate = s.rates[j];
    memory_rate_ = s.memory_rate;
    posted_ = s.posted;
    drain_ = s.drain;
    memory.capacity = s.memory_capacity;
    write_share_ = s.write_share;
    memory_latency_ = s.memory_latency;
    regions_ = s.regions;
    aligned_ = s.aligned;
    memory_unlimited_ = s.memory_unlimited;
    return;
  }
  solve_uncached();
  if (solution_count_ >= kMaxSolutions) {
    solutions_.clear();
    solution_count_ = 0;
  }
  Solution s;
  for (const Flow& f : flows_) s.rates.push_back(f.rate);
  s.memory_rate = memory_rate_;
  s.posted = posted_;
  s.drain = drain_;
  s.memory_capacity = resources_[static_cast<std::size_t>(memory_resource_)].capacity;
  s.write_share = write_share_;
  s.memory_latency = memory_latency_;
  s.regions = regions_;
  s.aligned = aligned_;
  s.memory_unlimited = memory_unlimited_;
  solutions_[hash].emplace_back(key_, std::move(s));
  ++solution_count_;
}

void Pipes::solve_uncached() {
  // The mix on memory: its write share and the regions read, weighted by bytes.
  double reads = 0, writes = 0, regions = 0, posted = 0, aligned = 0;
  bool misses = false;
  for (const Flow& f : flows_) {
    reads += f.work.memory_read_bytes;
    writes += f.work.memory_write_bytes + f.work.writeback_bytes;
    regions += f.work.memory_read_bytes * f.work.read_regions;
    aligned += f.work.memory_read_bytes * f.work.aligned;
    posted += f.work.posted_bytes;
    misses = misses || f.work.memory_reads > 0;
  }
  Resource& memory = resources_[static_cast<std::size_t>(memory_resource_)];
  if (reads + writes + posted <= 0 && backlog_ <= 0) {  // nothing on memory: no curves needed
    memory_unlimited_ = true;
    fill(0);
    drain_ = 0;
    return;
  }
  const double total = reads + writes + posted;
  write_share_ = total > 0 ? (writes + posted) / total : 1.0;
  regions_ = reads > 0 ? std::max(1, static_cast<int>(std::lround(regions / reads))) : 1;
  aligned_ = reads > 0 ? std::min(1.0, aligned / reads) : 0;
  const double peak = memory_.peak_bandwidth(regions_, write_share_, aligned_) * 1e-12;  // bytes/ps
  const double write_peak = memory_.peak_bandwidth(1, 1.0, 0) * 1e-12;
  // Posted victims come first (they are ahead in the FIFO); what is left serves the
  // flows' memory demand, unless victims are queued: then nothing is left until they
  // are in. The posting rates depend on the flows' rates, which depend on the memory
  // left: a first fill with unlimited memory gives them for flows that do not need
  // memory; flows that do are held to what is left by the second.
  memory_unlimited_ = peak <= 0;  // a fixed memory without a bandwidth limit
  fill(0);  // the posters' rates (they do not use memory; the rest is redone below)
  const double posting = posted_;
  const bool blocked = !memory_unlimited_ && (backlog_ > 0 || posting > peak);
  drain_ = blocked ? write_peak : posting;
  memory.capacity = blocked ? 0 : std::max(0.0, peak - posting);
  auto latency_at = [&](double rate) {
    return memory_.read_latency(regions_, write_share_, aligned_, rate * 1e12);
  };
  const double path = static_cast<double>(config_.miss_path_latency);
  if (!misses || blocked) {
    fill(path + static_cast<double>(latency_at(peak > 0 ? peak : 1e30)));
    memory_latency_ = latency_at(memory_rate_ + posting);
    return;
  }
  // The rates fall as the miss latency rises and the latency rises with the rate: the
  // fixed point lies between the rates at the loaded (peak) and the idle latency.
  fill(path + static_cast<double>(latency_at(peak > 0 ? peak : 1e30)));
  double lo = memory_rate_;
  fill(path + static_cast<double>(latency_at(posting)));
  double hi = memory_rate_;
  if (hi - lo > kRelativeGap * hi) {
    for (int i = 0; i < kMaxBisections && hi - lo > kRelativeGap * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      fill(path + static_cast<double>(latency_at(mid + posting)));
      if (memory_rate_ > mid) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    fill(path + static_cast<double>(latency_at(lo + posting)));  // the consistent side
  }
  memory_latency_ = latency_at(memory_rate_ + posting);
}

Tick Pipes::others_latency(const Flow& f) {
  if (memory_unlimited_) return memory_latency_;
  const double others = std::max(0.0, memory_rate_ - f.rate * memory_demand(f.work) + posted_);
  return memory_.read_latency(regions_, write_share_, aligned_, others * 1e12);
}

void Pipes::schedule_next() {
  ++generation_;
  double soonest = std::numeric_limits<double>::infinity();
  for (const Flow& f : flows_)
    if (f.rate > 0) soonest = std::min(soonest, f.remaining / f.rate);
  if (backlog_ > 0 && drain_ > posted_) soonest = std::min(soonest, backlog_ / (drain_ - posted_));
  if (!std::isfinite(soonest)) return;
  const Tick at = queue_.now() + static_cast<Tick>(std::ceil(soonest));
  const std::uint64_t g = generation_;
  queue_.schedule(at, Priority::Memory, [this, g] { on_wake(g); });
}

void Pipes::on_wake(std::uint64_t generation) {
  if (generation != generation_) return;  // superseded by a later start
  advance_to_now();
  std::vector<Flow> finished;
  for (std::size_t i = 0; i < flows_.size();) {
    if (flows_[i].remaining <= kDone) {
      finished.push_back(std::move(flows_[i]));
      flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  const Tick now = queue_.now();
  for (Flow& f : finished) {
    const int deepest = f.work.deepest;
    // The last miss waits the memory latency of the load the others put on memory: the
    // queueing a flow causes itself is its own misses ahead of its last, already in its
    // work at the rate memory gave it. (At the latency of the whole load, a flow alone at
    // the HBM's peak paid its queue twice: the H100's 1 MiB chunks took 0.65 us of
    // transfer and 0.5 us of tail, where line fidelity's last line of a chunk issued at
    // once comes an idle latency after the transfer.)
    const Tick tail =
        deepest >= static_cast<int>(config_.levels.size())
            ? config_.miss_path_latency + others_latency(f)
            : config_.levels[static_cast<std::size_t>(std::max(0, deepest))].hit_latency;
    if (f.work.memory_reads > 0 && deepest >= static_cast<int>(config_.levels.size())) {
      const auto g = static_cast<std::size_t>(f.work.group);
      if (g >= tails_.size()) tails_.resize(g + 1);
      tails_[g].push_back({now, now + tail, mshrs_held(f)});
    }
    Done done = std::move(f.done);
    const Tick at = now + tail;
    queue_.schedule(at, Priority::Response, [done = std::move(done), at] { done(at); });
  }
  solve();
  schedule_next();
}

}  // namespace fusim::residency
