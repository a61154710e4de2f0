// CADS, a core-aware dynamic scheduler (Olmedo Sanchez & Sun, "CADS: Core-Aware Dynamic
// Scheduler for Multicore Memory Controllers", CSIT 9(7), 2019, arXiv:1907.07776): the
// controller measures each requester's behaviour and a reinforcement-learning agent
// changes the scheduling strategy at run time. As in the paper, the agent does not pick
// single commands (that is Ipek et al., "Self-Optimizing Memory Controllers", ISCA 2008)
// but a strategy: each epoch (epoch_cycles) it runs one of fusim's fixed policies
// (kCadsPolicies: fcfs, frfcfs, frfcfs-cap, stream-aware), the very objects those names
// build, so each behaves exactly as when configured alone.
//
// Agent: tabular Q-learning (Watkins & Dayan 1992) with epsilon-greedy exploration, the
// paper's choice of method; every action is tried once in a state before the greedy choice
// applies (no optimistic initial values, so the reward needs no scale). The default
// discount is 0, a contextual bandit: a policy's effect on latency shows within its own
// epoch, and on the tests' two-requester traces the bandit settled on the best policy in
// more epochs than with discount 0.5 (bursts: 74% of the epochs against 54%).
//
// Per requester and epoch it measures: bandwidth share (column commands), row-hit rate,
// queue occupancy (queued requests per decision) and stall time (how long its oldest
// request handed to pick() has waited). State: 4 bits of those: the dominant requester (most column
// commands) mostly hits its rows (>= 1/2); it takes >= 3/4 of the commands; the queue is
// at least half full on average; some requester's oldest request waited more than 4x the
// epoch's mean latency (it starves).
//
// Reward (this file's choice; the paper states its goal as locality, bank parallelism
// and fairness together): served bandwidth weighted by the critical requester's latency,
// r = (column commands / epoch cycles) / L_crit, where L_crit is the largest mean latency,
// arrival to column command in cycles, among the requesters. Each requester's latency is
// the one of the epoch itself, by Little's law: the cycles its requests spent queued
// within the epoch (from on_arrival and on_column, so requests pick() is not handed count
// too) over the requests it was served (at least 1). The summed latencies of the
// requests served would charge a policy that clears a backlog with the waits the previous
// policy left, and would not charge a policy that serves a requester nothing. Under a
// load the DRAM can carry, bandwidth follows the arrivals whatever the policy, and r ranks
// policies by the slowest requester's latency; at saturation the served bandwidth counts
// too. An epoch that serves nothing teaches nothing.
//
// Deterministic: the exploration draws come from splitmix64 seeded with cads.seed.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "core/splitmix.h"
#include "mem/dram/dram_stats.h"
#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

constexpr int kStateBits = 4;
constexpr std::size_t kStates = std::size_t{1} << kStateBits;
constexpr std::size_t kActions = kCadsPolicyCount;

class Cads final : public Scheduler {
 public:
  explicit Cads(const ControllerConfig& cfg)
      : epoch_(cfg.epoch_cycles),
        alpha_(cfg.cads.learning_rate),
        epsilon_(cfg.cads.exploration),
        gamma_(cfg.cads.discount),
        rng_(cfg.cads.seed),
        half_queue_(std::max(1, cfg.read_queue / 2)),
        policies_{make_fcfs_scheduler(cfg), make_frfcfs_scheduler(cfg),
                  make_frfcfs_cap_scheduler(cfg), make_stream_aware_scheduler(cfg)} {
    action_ = choose(state_);
  }

  std::size_t pick(const Candidate* c, std::size_t n) override {
    // Occupancy and the stall of each requester's oldest request (c is in age order, so a
    // requester's first candidate is its oldest), at the earliest ready cycle.
    Cycle first = kNoCycle;
    for (std::size_t i = 0; i < n; ++i) first = std::min(first, c[i].ready);
    ++stamp_;
    for (std::size_t i = 0; i < n; ++i) {
      Measure& m = at(c[i].requester);
      if (m.stamp == stamp_) continue;
      m.stamp = stamp_;
      m.max_stall = std::max(m.max_stall, first - c[i].arrival);
    }
    ++decisions_;
    queued_ += n;
    return policies_[action_]->pick(c, n);
  }

  int row_hit_cap() const override { return policies_[action_]->row_hit_cap(); }

  void on_arrival(int requester, Cycle arrival) override {
    Measure& m = advance(requester, arrival);
    ++m.queued;
  }

  void on_column(int requester, bool row_hit, Cycle arrival, Cycle now) override {
    if (now >= epoch_end_) close_epoch(now);
    Measure& m = advance(requester, now);
    if (m.queued > 0) --m.queued;
    ++m.columns;
    m.hits += row_hit ? 1 : 0;
    m.latency += now - arrival;
    for (auto& p : policies_) p->on_column(requester, row_hit, arrival, now);
  }

  void set_stats(DramStats* stats) override {
    stats_ = stats;
    if (stats_ && stats_->policy_epochs.size() < kActions) stats_->policy_epochs.resize(kActions);
  }

 private:
  struct Measure {
    std::uint64_t columns = 0, hits = 0, stamp = 0;
    Cycle latency = 0, max_stall = 0;  // summed latency; longest wait of its oldest
    std::uint64_t queued = 0;          // its requests in the queue (kept across epochs)
    Cycle waited = 0, since = 0;       // request-cycles queued in the epoch, counted to `since`
  };
  // Counts requester's queued requests up to cycle t (events come in near time order; an
  // earlier t counts as `since`).
  Measure& advance(int requester, Cycle t) {
    Measure& m = at(requester);
    if (t > m.since) {
      m.waited += m.queued * (t - m.since);
      m.since = t;
    }
    return m;
  }
  Measure& at(int requester) {
    const auto r = static_cast<std::size_t>(std::max(requester, 0));
    if (r >= measures_.size()) measures_.resize(r + 1);
    return measures_[r];
  }

  std::uint64_t draw() { return splitmix64(rng_); }

  std::size_t choose(std::size_t s) {
    for (std::size_t a = 0; a < kActions; ++a) {
      if (visits_[s][a] == 0) return a;  // every policy once in each state first
    }
    if (epsilon_ > 0 && static_cast<double>(draw() >> 11) * 0x1.0p-53 < epsilon_)
      return static_cast<std::size_t>(draw() % kActions);
    std::size_t best = 0;
    for (std::size_t a = 1; a < kActions; ++a) {
      if (q_[s][a] > q_[s][best]) best = a;  // ties: the earlier policy
    }
    return best;
  }

  void close_epoch(Cycle now) {
    epoch_end_ = (now / epoch_ + 1) * epoch_;
    std::uint64_t columns = 0, dominant_columns = 0, dominant_hits = 0;
    Cycle latency = 0, max_stall = 0;
    double worst = 0;  // the critical requester's mean latency
    std::size_t dominant = measures_.size();
    for (std::size_t r = 0; r < measures_.size(); ++r) {
      const Measure& m = advance(static_cast<int>(r), now);
      max_stall = std::max(max_stall, m.max_stall);
      worst = std::max(worst, static_cast<double>(m.waited) /
                                  static_cast<double>(std::max<std::uint64_t>(1, m.columns)));
      if (m.columns == 0) continue;
      columns += m.columns;
      latency += m.latency;
      if (dominant == measures_.size() || m.columns > dominant_columns) {
        dominant = r, dominant_columns = m.columns, dominant_hits = m.hits;
      }
    }
    if (columns > 0) {
      const double bandwidth = static_cast<double>(columns) / static_cast<double>(epoch_);
      const double reward = bandwidth / std::max(1.0, worst);
      const double mean_latency = static_cast<double>(latency) / static_cast<double>(columns);
      const std::size_t next =
          (2 * dominant_hits >= dominant_columns ? 1u : 0u) |
          (4 * dominant_columns >= 3 * columns ? 2u : 0u) |
          (decisions_ > 0 && queued_ >= decisions_ * static_cast<std::uint64_t>(half_queue_) ? 4u
                                                                                             : 0u) |
          (static_cast<double>(max_stall) > 4 * mean_latency ? 8u : 0u);
      // The step is 1/n for the first 1/alpha visits of (state, policy) (the sample mean, so
      // that one early epoch does not leave a policy's value at alpha x its reward while the
      // greedy one climbs), alpha after that (recent epochs weigh more: traffic changes).
      double& q = q_[state_][action_];
      const double future = *std::max_element(q_[next].begin(), q_[next].end());
      const std::uint64_t n = ++visits_[state_][action_];
      q += std::max(alpha_, 1.0 / static_cast<double>(n)) * (reward + gamma_ * future - q);
      if (stats_) ++stats_->policy_epochs[action_];
      state_ = next;
      action_ = choose(state_);
    }
    for (Measure& m : measures_) {
      Measure next;  // what is queued stays queued
      next.queued = m.queued;
      next.since = m.since;
      m = next;
    }
    decisions_ = queued_ = 0;
  }

  const Cycle epoch_;
  const double alpha_, epsilon_, gamma_;
  std::uint64_t rng_;
  const int half_queue_;
  std::array<std::unique_ptr<Scheduler>, kActions> policies_;
  std::array<std::array<double, kActions>, kStates> q_{};
  std::array<std::array<std::uint64_t, kActions>, kStates> visits_{};
  std::size_t state_ = 0, action_ = 0;
  Cycle epoch_end_ = 0;
  std::vector<Measure> measures_;
  std::uint64_t stamp_ = 0, decisions_ = 0, queued_ = 0;
  DramStats* stats_ = nullptr;
};

}  // namespace

std::unique_ptr<Scheduler> make_cads_scheduler(const ControllerConfig& cfg) {
  return std::make_unique<Cads>(cfg);
}

}  // namespace fusim::dram
