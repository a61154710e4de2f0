#include "parallel/step_timing.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "core/error.h"

namespace fusim::parallel {
namespace {
using schedule::Ordering;

// When an item's inputs are there, and when the compute that produced them ended (the part
// of a wait after that is communication).
struct Ready {
  Tick at = 0, produced = 0;
};
struct Arrival {
  Tick at = 0, produced = 0;
};

ItemKind item_kind(PassKind k) {
  return k == PassKind::F ? ItemKind::F : k == PassKind::B ? ItemKind::B : ItemKind::W;
}

int buckets_of(const ChunkWork& w) {
  return std::max<int>(1, int(w.buckets.size()));
}
GradBucket bucket_of(const ChunkWork& w, int b) {
  return b < int(w.buckets.size()) ? w.buckets[std::size_t(b)] : GradBucket{};
}

// The items of one stage over `steps` steps in execution order, updates placed by ordering.
std::vector<TimedItem> stage_order(const StepQuery& q, int stage, int steps) {
  const ParallelPlan& plan = q.plan;
  const auto& work = q.work[std::size_t(stage)];
  const int m = int(plan.microbatches()), v = plan.virtual_stages;
  const PassKind grad_kind = splits_weight_gradient(plan.schedule) ? PassKind::W : PassKind::B;
  std::vector<TimedItem> out;
  auto updates = [&](int step, int chunk) {
    for (int b = 0; b < buckets_of(work[std::size_t(chunk)]); ++b)
      out.push_back({ItemKind::U, step, 0, chunk, b});
  };
  if (is_asynchronous(plan.schedule)) {
    // One chunk per stage (v = 1); no flush: the updates of step k follow its last gradient
    // pass (eager, backward-fused) or precede the first forward after it (forward-fused),
    // which in 1F1B's alternation is the same place but for the last step.
    const auto passes = asynchronous_passes(plan, stage, steps);
    std::vector<int> last(std::size_t(steps), -1);  // last gradient pass of each step
    for (int i = 0; i < int(passes.size()); ++i)
      if (passes[std::size_t(i)].kind == grad_kind)
        last[std::size_t(passes[std::size_t(i)].microbatch / m)] = i;
    std::vector<int> pending;  // forward-fused: steps whose updates wait for a forward
    for (int i = 0; i < int(passes.size()); ++i) {
      const Pass& p = passes[std::size_t(i)];
      const int k = p.microbatch / m;
      if (p.kind == PassKind::F) {
        for (int step : pending) updates(step, 0);
        pending.clear();
      }
      out.push_back({item_kind(p.kind), k, p.microbatch % m, p.chunk});
      if (i == last[std::size_t(k)]) {
        if (q.ordering == Ordering::ForwardFused)
          pending.push_back(k);
        else
          updates(k, 0);
      }
    }
    for (int step : pending) updates(step, 0);
    return out;
  }
  const auto passes = stage_passes(plan, stage);
  std::vector<int> first_f(std::size_t(v), -1), last_grad(std::size_t(v), -1);
  for (int i = 0; i < int(passes.size()); ++i) {
    const Pass& p = passes[std::size_t(i)];
    if (p.kind == PassKind::F && first_f[std::size_t(p.chunk)] < 0)
      first_f[std::size_t(p.chunk)] = i;
    if (p.kind == grad_kind) last_grad[std::size_t(p.chunk)] = i;
  }
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < int(passes.size()); ++i) {
      const Pass& p = passes[std::size_t(i)];
      if (q.ordering == Ordering::ForwardFused && i == first_f[std::size_t(p.chunk)])
        updates(k, p.chunk);
      out.push_back({item_kind(p.kind), k, p.microbatch, p.chunk});
      if (q.ordering == Ordering::BackwardFused && i == last_grad[std::size_t(p.chunk)])
        updates(k, p.chunk);
    }
    if (q.ordering == Ordering::Eager)
      for (int c = 0; c < v; ++c) updates(k, c);
  }
  return out;
}

// A pass's compute with its blocking TP collectives: when it ends, and the time at an
// offset into its compute.
struct PassRun {
  Tick start = 0, end = 0, communication = 0;
  std::vector<std::pair<Tick, Tick>> stalls;  // (offset, collective time)
  Tick at(Tick offset) const {
    Tick t = start + offset;
    for (auto [o, d] : stalls)
      if (o < offset) t += d;
    return t;
  }
};

class Engine {
 public:
  explicit Engine(const StepQuery& q)
      : q_(q), plan_(q.plan), net_(q.cluster, q.plan.gpus()), m_(int(q.plan.microbatches())) {
    net_.record(q.record_links);
    split_ = splits_weight_gradient(plan_.schedule);
  }

  StepTiming run(int steps) {
    const int p = plan_.pp;
    std::vector<std::vector<TimedItem>> order;
    for (int s = 0; s < p; ++s) order.push_back(stage_order(q_, s, steps));
    std::vector<std::size_t> next(std::size_t(p), 0);
    std::vector<Tick> free(std::size_t(p), 0);
    std::size_t remaining = 0;
    for (const auto& o : order) remaining += o.size();
    while (remaining > 0) {
      int best = -1;
      Tick best_start = 0;
      Ready best_ready;
      for (int s = 0; s < p; ++s) {
        if (next[std::size_t(s)] >= order[std::size_t(s)].size()) continue;
        const auto r = ready(s, order[std::size_t(s)][next[std::size_t(s)]]);
        if (!r) continue;
        const Tick start = std::max(free[std::size_t(s)], r->at);
        if (best < 0 || start < best_start) {
          best = s;
          best_start = start;
          best_ready = *r;
        }
      }
      FUSIM_ASSERT(best >= 0, "a multi-device step whose items can all run (no cyclic wait)");
      TimedItem& item = order[std::size_t(best)][next[std::size_t(best)]];
      const Tick idle = best_start - free[std::size_t(best)];
      item.waited_communication =
          std::max<Tick>(0, best_start - std::max(free[std::size_t(best)], best_ready.produced));
      item.waited_pipeline = idle - item.waited_communication;
      item.start = best_start;
      execute(best, item);
      free[std::size_t(best)] = item.end;
      ++next[std::size_t(best)];
      --remaining;
    }
    StepTiming out;
    out.steps = steps;
    for (int s = 0; s < p; ++s) out.stages.push_back(window(std::move(order[std::size_t(s)])));
    for (const auto& st : out.stages) out.step_time = std::max(out.step_time, st.window);
    out.messages = net_.messages();
    return out;
  }

 private:
  using MbKey = std::pair<int, int>;               // global microbatch, model chunk
  using GradKey = std::tuple<int, int, int, int>;  // stage, local chunk, step, bucket
  using WeightKey = std::tuple<int, int, int>;     // stage, local chunk, step of the U

  int gpu(int tp, int cp, int dp, int stage) const { return gpu_rank(plan_, tp, cp, dp, stage); }
  int global_mb(const TimedItem& it) const { return it.step * m_ + it.microbatch; }
  const ChunkWork& work(int stage, int local) const {
    return q_.work[std::size_t(stage)][std::size_t(local)];
  }
  bool communicates() const { return !q_.free_communication; }

  std::optional<Ready> ready(int s, const TimedItem& it) const {
    const int c = model_chunk(plan_, s, it.chunk), mb = global_mb(it);
    auto from = [](const std::map<MbKey, Arrival>& m, MbKey k) -> std::optional<Ready> {
      auto i = m.find(k);
      if (i == m.end()) return std::nullopt;
      return Ready{i->second.at, i->second.produced};
    };
    switch (it.kind) {
      case ItemKind::F: {
        Ready r;
        if (c > 0) {
          auto a = from(forward_, {mb, c - 1});
          if (!a) return std::nullopt;
          r = *a;
        }
        // The distributed optimizer's all-gather of the weights this forward reads.
        const int u_step = q_.ordering == Ordering::ForwardFused ? it.step : it.step - 1;
        if (!is_asynchronous(plan_.schedule) && u_step >= 0) {
          auto w = weights_.find({s, it.chunk, u_step});
          if (w != weights_.end()) {
            r.at = std::max(r.at, w->second.at);
            r.produced = std::max(r.produced, w->second.produced);
          }
        }
        return r;
      }
      case ItemKind::B:
        if (c == plan_.chunks() - 1) return from(done_f_, {mb, c});
        return from(backward_, {mb, c + 1});
      case ItemKind::W:
        return from(done_b_, {mb, c});
      case ItemKind::U: {
        // Synchronous forward-fused updates before step k's forwards apply step k - 1's
        // gradients; every other update (asynchronous ones too) is labelled by its own.
        const int grad_step =
            q_.ordering == Ordering::ForwardFused && !is_asynchronous(plan_.schedule) ? it.step - 1
                                                                                      : it.step;
        if (grad_step < 0) return Ready{0, 0};
        auto reduced = [&](int chunk, int bucket) -> std::optional<Ready> {
          auto g = reduced_.find({s, chunk, grad_step, bucket});
          if (g == reduced_.end()) return std::nullopt;
          return Ready{g->second.at, g->second.produced};
        };
        if (q_.ordering != Ordering::Eager) return reduced(it.chunk, it.bucket);
        // Eager: the optimizer step starts once every bucket is reduced (Megatron's
        // finish_grad_sync before optimizer.step()), on a synchronous schedule those of
        // every stage: the gradient norm for clipping is all-reduced over the model-parallel
        // group first (Megatron's clip_grad_norm, default --clip-grad 1.0), a flush of the
        // pipeline (Qi et al. 2024, Sec. 3: the optimizer step's synchronization). The
        // scalar all-reduce itself is not timed.
        const bool flush = !is_asynchronous(plan_.schedule);
        Ready all;
        for (int st = flush ? 0 : s; st <= (flush ? plan_.pp - 1 : s); ++st)
          for (int c = 0; c < plan_.virtual_stages; ++c)
            for (int b = 0; b < buckets_of(work(st, c)); ++b) {
              auto g = reduced_.find({st, c, grad_step, b});
              if (g == reduced_.end()) return std::nullopt;
              all.at = std::max(all.at, g->second.at);
              all.produced = std::max(all.produced, g->second.produced);
            }
        return all;
      }
    }
    return std::nullopt;
  }

  // The stage's TP group (replica 0), all ranks ready at t: when the collective ends there.
  Tick tp_collective(int s, std::int64_t bytes, Tick t) {
    std::vector<int> ranks;
    for (int j = 0; j < plan_.tp; ++j) ranks.push_back(gpu(j, 0, 0, s));
    auto last = [](const std::vector<Tick>& v) { return *std::max_element(v.begin(), v.end()); };
    if (!plan_.sequence_parallel)
      return last(run_collective(net_, Collective::AllReduce, ranks, bytes, t));
    // Sequence parallelism: the all-reduce becomes a reduce-scatter and an all-gather of
    // the same tensor (Korthikanti et al. 2022, Sec. 4.2.2), same bytes on the links.
    const Tick rs = last(run_collective(net_, Collective::ReduceScatter, ranks, bytes, t));
    return last(run_collective(net_, Collective::AllGather, ranks, bytes, rs));
  }

  // The DP group's collective for stage s, one group per TP rank (replica 0's peers).
  Tick dp_collective(int s, Collective c, std::int64_t bytes, Tick t) {
    Tick end = t;
    for (int j = 0; j < plan_.tp; ++j) {
      std::vector<int> ranks;
      for (int d = 0; d < plan_.dp; ++d)
        for (int r = 0; r < plan_.cp; ++r) ranks.push_back(gpu(j, r, d, s));
      std::sort(ranks.begin(), ranks.end());
      const auto done = run_collective(net_, c, ranks, bytes, t);
      end = std::max(end, *std::max_element(done.begin(), done.end()));
    }
    return end;
  }

  // CP ring attention on stage s from t (the attention's compute starting): when the
  // attention ends on replica 0's CP rank 0 of each TP rank (the ranks are symmetric).
  Tick cp_ring(int s, const CpRing& ring, Tick t) {
    const int n = plan_.cp;
    Tick end = t;
    for (int j = 0; j < plan_.tp; ++j) {
      // held[r]: when CP rank r holds the chunk it passes on next.
      std::vector<Tick> held(std::size_t(n), t), next(std::size_t(n), t);
      Tick compute_end = t + ring.compute / n;  // the rank's own chunk
      for (int k = 1; k < n; ++k) {
        for (int r = 0; r < n; ++r) {
          const int to = (r + 1) % n;
          next[std::size_t(to)] =
              net_.send(gpu(j, r, 0, s), gpu(j, to, 0, s), ring.bytes, held[std::size_t(r)]);
        }
        held = next;
        const Tick part = ring.compute * (k + 1) / n - ring.compute * k / n;
        compute_end = std::max(compute_end, held[0]) + part;
      }
      end = std::max(end, compute_end);
    }
    return end;
  }

  // A pass's compute with its TP collectives (blocking) and CP rings (overlapping the
  // attention), in offset order.
  PassRun run_pass(int s, Tick start, Tick compute, const std::vector<TpCollective>& tp,
                   const std::vector<CpRing>& cp = {}) {
    PassRun r;
    r.start = start;
    Tick t = start, done = 0;
    std::size_t i = 0, k = 0;
    const bool tp_on = communicates() && plan_.tp > 1, cp_on = communicates() && plan_.cp > 1;
    while ((tp_on && i < tp.size()) || (cp_on && k < cp.size())) {
      const bool ring =
          cp_on && k < cp.size() && (!tp_on || i >= tp.size() || cp[k].offset < tp[i].offset);
      const Tick offset = std::max(done, ring ? cp[k].offset : tp[i].offset);
      t += offset - done;
      done = offset;
      if (ring) {
        const CpRing& c = cp[k++];
        const Tick end = cp_ring(s, c, t);
        const Tick stall = end - t - c.compute;
        r.stalls.push_back({offset, stall});
        r.communication += stall;
        t = end;
        done += c.compute;
      } else {
        const Tick end = tp_collective(s, tp[i++].bytes, t);
        r.stalls.push_back({offset, end - t});
        r.communication += end - t;
        t = end;
      }
    }
    r.end = t + compute - done;
    return r;
  }

  // A P2P transfer of chunk-microbatch data from stage `from` to `to`, each TP rank to its
  // peer: when it has arrived.
  Tick p2p(int from, int to, std::int64_t bytes, Tick t) {
    if (from == to || !communicates()) return t;
    Tick at = t;
    for (int j = 0; j < plan_.tp; ++j)
      at = std::max(at, net_.send(gpu(j, 0, 0, from), gpu(j, 0, 0, to), bytes, t));
    return at;
  }

  void gradient_pass_done(int s, const TimedItem& it, const PassRun& run) {
    if (++grad_passes_[{s, it.chunk, it.step}] < m_) return;
    const ChunkWork& w = work(s, it.chunk);
    const bool reduce = communicates() && plan_.dp * plan_.cp > 1;
    for (int b = 0; b < buckets_of(w); ++b) {
      const GradBucket bucket = bucket_of(w, b);
      const Tick ready = run.at(bucket.ready_offset);
      const Tick done = reduce
                            ? dp_collective(s,
                                            plan_.distributed_optimizer ? Collective::ReduceScatter
                                                                        : Collective::AllReduce,
                                            bucket.bytes, ready)
                            : ready;
      reduced_[{s, it.chunk, it.step, b}] = {done, ready};
    }
  }

  void execute(int s, TimedItem& it) {
    const int c = model_chunk(plan_, s, it.chunk), mb = global_mb(it);
    const ChunkWork& w = work(s, it.chunk);
    switch (it.kind) {
      case ItemKind::F: {
        const PassRun r = run_pass(s, it.start, w.forward, w.forward_tp, w.forward_cp);
        it.end = r.end;
        it.communication = r.communication;
        done_f_[{mb, c}] = {r.end, r.end};
        if (c + 1 < plan_.chunks()) {
          const int to = stage_of_chunk(plan_, c + 1);
          forward_[{mb, c}] = {p2p(s, to, w.output_bytes, r.end), r.end};
        }
        break;
      }
      case ItemKind::B: {
        const PassRun r = run_pass(s, it.start, w.backward, w.backward_tp, w.backward_cp);
        it.end = r.end;
        it.communication = r.communication;
        done_b_[{mb, c}] = {r.end, r.end};
        if (c > 0) {
          const int to = stage_of_chunk(plan_, c - 1);
          const std::int64_t bytes = work(to, local_chunk(plan_, c - 1)).output_bytes;
          backward_[{mb, c}] = {p2p(s, to, bytes, r.end), r.end};
        }
        if (!split_) gradient_pass_done(s, it, r);
        break;
      }
      case ItemKind::W: {
        const PassRun r = run_pass(s, it.start, w.weight, {});
        it.end = r.end;
        gradient_pass_done(s, it, r);
        break;
      }
      case ItemKind::U: {
        const GradBucket bucket = bucket_of(w, it.bucket);
        it.end = it.start + bucket.update;
        Tick at = it.end;
        if (plan_.distributed_optimizer && communicates() && plan_.dp * plan_.cp > 1)
          at = dp_collective(s, Collective::AllGather, bucket.weight_bytes, it.end);
        auto& wr = weights_[{s, it.chunk, it.step}];
        wr.at = std::max(wr.at, at);
        wr.produced = std::max(wr.produced, it.end);
        break;
      }
    }
  }

  // The steady-state step of a stage: from the end of its last update of step 1 to that of
  // step 2, each item in it split into busy, exposed communication and bubble.
  StageStep window(std::vector<TimedItem> items) const {
    std::vector<Tick> last_u(3, -1);
    for (const auto& it : items)
      if (it.kind == ItemKind::U && it.step >= 1 && it.step <= 2)
        last_u[std::size_t(it.step)] = std::max(last_u[std::size_t(it.step)], it.end);
    FUSIM_ASSERT(last_u[1] >= 0 && last_u[2] >= 0, "updates of steps 1 and 2 on every stage");
    StageStep st;
    st.from = last_u[1];
    st.window = last_u[2] - last_u[1];
    for (const auto& it : items)
      if (it.end > last_u[1] && it.end <= last_u[2]) {
        st.busy += it.end - it.start - it.communication;
        st.exposed_communication += it.communication + it.waited_communication;
        st.bubble += it.waited_pipeline;
      }
    FUSIM_ASSERT(st.busy + st.exposed_communication + st.bubble == st.window,
                 "a stage's step splits into busy, exposed communication and bubble");
    st.items = std::move(items);
    return st;
  }

  const StepQuery& q_;
  const ParallelPlan& plan_;
  LinkNetwork net_;
  int m_ = 1;
  bool split_ = false;
  std::map<MbKey, Arrival> forward_, backward_;  // arrivals at the consumer's stage
  std::map<MbKey, Arrival> done_f_, done_b_;     // on the pass's own stage
  std::map<GradKey, Arrival> reduced_;           // bucket reduced (produced: its grads ready)
  std::map<WeightKey, Arrival> weights_;         // updated weights in place (all-gathered)
  std::map<std::tuple<int, int, int>, int> grad_passes_;  // stage, chunk, step -> done
};
}  // namespace

double StepTiming::bubble_fraction() const {
  Tick bubble = 0, busy = 0;
  for (const auto& s : stages) {
    bubble += s.bubble;
    busy += s.busy;
  }
  return busy > 0 ? double(bubble) / double(busy) : 0.0;
}

int gpu_rank(const ParallelPlan& plan, int tp, int cp, int dp, int stage) {
  return tp + plan.tp * (cp + plan.cp * (dp + plan.dp * stage));
}

StepTiming time_step(const StepQuery& query) {
  const ParallelPlan& plan = query.plan;
  FUSIM_ASSERT(int(query.work.size()) == plan.pp, "work for every stage");
  for (const auto& w : query.work)
    FUSIM_ASSERT(int(w.size()) == plan.virtual_stages, "work for every chunk of a stage");
  FUSIM_ASSERT(query.ordering != schedule::Ordering::Mixed, "a whole-model ordering");
  // Asynchronous schedules: steps 1 and 2 in the steady state (as pipeline_timing.h).
  const std::int64_t m = plan.microbatches();
  const int steps = is_asynchronous(plan.schedule) ? 3 + int((plan.pp + m - 1) / m) : 3;
  return Engine(query).run(steps);
}

}  // namespace fusim::parallel
